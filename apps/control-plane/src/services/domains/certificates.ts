import { type KeyObject, X509Certificate, createPrivateKey } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Certificate, Db } from '@skiff/db';
import { commonNameOf, dnsNamesOf, hostCoveredBy, isPrivateKeyLabel, normalizeHost, pemBlocks } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer, visibleServers } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, uniqueAs } from '../shared/deps.js';
import type { ProxyConfig } from './proxy-config.js';
import { RecordCodec } from '../shared/record-codec.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { findOfOrganization } from '../shared/organization-records.js';

type CertificateRecord = OutputOf<Contracts['certificates']['one']>;

/** Where the proxy host keeps custom certificates, one folder each. */
export const CERTIFICATE_DIR = '/etc/skiff/certificates';
const FOLDER = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_CHAIN = 10;

export interface CertificateInput {
  certificateId?: string;
  name: string;
  certificateData: string;
  privateKey: string;
  certificatePath?: string;
  autoRenew?: boolean | null;
  organizationId: string;
  serverId?: string | null;
}

/** What a PEM pair says about itself, once checked. */
interface ParsedPair {
  certificateData: string;
  privateKey: string;
  subject: string;
  issuer: string;
  subjectNames: string[];
  notBefore: Date;
  expiresAt: Date;
  fingerprint: string;
}

/** Custom TLS certificates: the PEM pair checked and described; the key sealed, never returned. */
export class CertificateService {
  private readonly codec: RecordCodec<CertificateRecord>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly proxy: ProxyConfig,
  ) {
    this.codec = new RecordCodec<CertificateRecord>(deps.secrets, {
      idField: 'certificateId',
      hidden: ['privateKey'],
    });
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: Certificate) => this.codec.record(row);

  async create(p: Principal, input: CertificateInput) {
    if (input.organizationId !== p.organizationId) throw NotFound('No such organization');
    const serverId = input.serverId ?? null;
    await this.access.checkServer(p, serverId);
    if (input.certificateId !== undefined && !CLIENT_ID.test(input.certificateId)) {
      throw Invalid('certificateId', 'must be 1 to 64 letters, digits, _ or -');
    }
    const id = input.certificateId ?? this.deps.ids('crt');
    const certificatePath = certificatePathOf(input.certificatePath ?? id);
    const pair = parsePair(input.certificateData, input.privateKey, this.deps.clock());
    if (input.certificateId !== undefined) {
      // Ids are unique within an organization (the key is both): another organization's is no concern.
      const taken = await this.db.selectFrom('certificates').select('id').where('id', '=', id).where('organizationId', '=', p.organizationId).executeTakeFirst();
      if (taken) throw Invalid('certificateId', 'already used');
    }
    // A folder name of the organization's: the proxy is given certificates by id, so another
    // organization's folders on the platform host are not in the way (nor told of).
    let q = this.db.selectFrom('certificates').select('id').where('certificatePath', '=', certificatePath).where('organizationId', '=', p.organizationId);
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    if (await q.executeTakeFirst()) throw Invalid('certificatePath', 'already used by another certificate on this server');
    const servers = (tx: Db) => this.serversUsing(tx, p.organizationId, serverId, pair.subjectNames);
    const row = await this.proxy.change(this.db, servers, (tx) =>
      uniqueAs('certificateId', 'already used', () =>
        tx
          .insertInto('certificates')
          .values({
            id,
            organizationId: p.organizationId,
            serverId,
            name: input.name,
            certificatePath,
            autoRenew: input.autoRenew ?? null,
            ...pair,
            privateKey: this.deps.secrets.seal(pair.privateKey),
            subjectNames: JSON.stringify(pair.subjectNames),
          })
          .returningAll()
          .executeTakeFirstOrThrow(),
      ),
      { field: 'certificateId', organizationId: p.organizationId },
    );
    return this.record(row);
  }

  async one(p: Principal, certificateId: string) {
    return this.record(await this.find(p, certificateId));
  }

  async all(p: Principal) {
    let q = this.db.selectFrom('certificates').selectAll().where('organizationId', '=', p.organizationId);
    const servers = visibleServers(p);
    if (servers) {
      // The platform host's (serverId null) are the organization's own, unless the key names servers.
      const platformHost = !p.scope?.serverIds;
      q = q.where((eb) => {
        const named = servers.length ? [eb('serverId', 'in', servers)] : [];
        const either = platformHost ? [eb('serverId', 'is', null), ...named] : named;
        return either.length ? eb.or(either) : eb.val(false);
      });
    }
    const rows = await q.orderBy('createdAt').orderBy('id').execute();
    return rows.map(this.record);
  }

  async remove(p: Principal, certificateId: string) {
    const row = await this.find(p, certificateId);
    const servers = (tx: Db) => this.serversUsing(tx, row.organizationId, row.serverId, row.subjectNames);
    await this.proxy.change(this.db, servers, (tx) => tx.deleteFrom('certificates').where('id', '=', row.id).where('organizationId', '=', row.organizationId).execute(), {
      field: 'certificateId',
      organizationId: row.organizationId,
    });
    return this.record(row);
  }

  /**
   * The certificate's server, when custom domains of its organization there have a host it
   * covers, or (on the platform host) the platform's own custom domain has: adding or removing
   * it can change which certificate they are served with.
   */
  private async serversUsing(tx: Db, organizationId: string, serverId: string | null, names: string[]): Promise<(string | null)[]> {
    let q = tx.selectFrom('domains').select('host').where('organizationId', '=', organizationId).where('certificateType', '=', 'custom');
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    const hosts = (await q.execute()).map((d) => d.host);
    if (serverId === null) {
      const platform = await tx.selectFrom('platformSettings').select('host').where('certificateType', '=', 'custom').where('host', 'is not', null).executeTakeFirst();
      if (platform?.host) hosts.push(platform.host);
    }
    return hosts.some((host) => hostCoveredBy(host, names)) ? [serverId] : [];
  }

  /** A certificate of the caller's organization; a member sees those of servers they were given. */
  private async find(p: Principal, certificateId: string): Promise<Certificate> {
    const row = await findOfOrganization(this.db, 'certificates', p, certificateId, 'certificate');
    if (row.serverId === null ? Boolean(p.scope?.serverIds) : !canSeeServer(p, row.serverId)) {
      throw Forbidden('No access to the server of this certificate');
    }
    return row;
  }
}

/** `name` or `/etc/skiff/certificates/name` → the full folder path; nothing that can leave it. */
function certificatePathOf(given: string): string {
  const prefix = `${CERTIFICATE_DIR}/`;
  const name = given.startsWith(prefix) ? given.slice(prefix.length) : given;
  if (!FOLDER.test(name) || name.includes('..')) {
    throw Invalid('certificatePath', `must be a folder name (letters, digits, . _ -, no ..) under ${CERTIFICATE_DIR}`);
  }
  return `${prefix}${name}`;
}

/**
 * Checks a PEM certificate chain and its key: the chain parses (leaf first, each issued by
 * the next), carries no private key, names at least one host and has not expired; the key
 * parses, is not encrypted and belongs to the leaf. Failures name `certificateData` or
 * `privateKey`.
 */
function parsePair(certificateData: string, privateKeyPem: string, now: Date): ParsedPair {
  const blocks = pemBlocks(certificateData);
  if (blocks.some((b) => isPrivateKeyLabel(b.label))) {
    throw Invalid('certificateData', 'contains a private key; give it in privateKey (certificateData is returned in responses)');
  }
  if (blocks.length === 0) throw Invalid('certificateData', 'is not a PEM certificate (-----BEGIN CERTIFICATE-----)');
  const other = blocks.find((b) => b.label !== 'CERTIFICATE');
  if (other) throw Invalid('certificateData', `holds a ${other.label} block; only CERTIFICATE blocks are allowed`);
  if (blocks.length > MAX_CHAIN) throw Invalid('certificateData', `a chain of at most ${MAX_CHAIN} certificates`);
  const chain: X509Certificate[] = [];
  for (const [i, block] of blocks.entries()) {
    try {
      chain.push(new X509Certificate(block.text));
    } catch {
      throw Invalid('certificateData', `certificate ${i + 1} does not parse as X.509`);
    }
  }
  for (let i = 0; i + 1 < chain.length; i++) {
    if (!chain[i]!.checkIssued(chain[i + 1]!) || !chain[i]!.verify(chain[i + 1]!.publicKey)) {
      throw Invalid('certificateData', `certificate ${i + 1} is not issued by certificate ${i + 2}: give the leaf first, then its issuers in order`);
    }
  }
  const leaf = chain[0]!;
  const notBefore = new Date(leaf.validFrom);
  const expiresAt = new Date(leaf.validTo);
  if (Number.isNaN(notBefore.getTime()) || Number.isNaN(expiresAt.getTime())) throw Invalid('certificateData', 'has no readable validity period');
  if (expiresAt.getTime() <= now.getTime()) throw Invalid('certificateData', `expired on ${expiresAt.toISOString()}`);
  let subjectNames = dnsNamesOf(leaf.subjectAltName);
  if (subjectNames.length === 0) {
    const cn = commonNameOf(leaf.subject);
    const host = cn === null ? null : normalizeHost(cn);
    subjectNames = host?.ok ? [host.value] : [];
  }
  if (subjectNames.length === 0) throw Invalid('certificateData', 'names no host (no subjectAltName DNS entry and no host name as CN)');

  const keyBlocks = pemBlocks(privateKeyPem).filter((b) => isPrivateKeyLabel(b.label));
  if (keyBlocks.length !== 1) throw Invalid('privateKey', 'must be one PEM private key (-----BEGIN PRIVATE KEY-----)');
  if (keyBlocks[0]!.label === 'ENCRYPTED PRIVATE KEY' || /Proc-Type:\s*4,ENCRYPTED/.test(keyBlocks[0]!.text)) {
    throw Invalid('privateKey', 'is encrypted; give the key without a passphrase');
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: keyBlocks[0]!.text, format: 'pem' });
  } catch {
    throw Invalid('privateKey', 'does not parse as a PEM private key');
  }
  if (!leaf.checkPrivateKey(key)) throw Invalid('privateKey', 'does not match the certificate');

  return {
    certificateData: chain.map((c) => c.toString()).join(''),
    privateKey: key.export({ type: 'pkcs8', format: 'pem' }) as string,
    subject: leaf.subject,
    issuer: leaf.issuer,
    subjectNames,
    notBefore,
    expiresAt,
    fingerprint: leaf.fingerprint256,
  };
}
