import { isIP } from 'node:net';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { PlatformSettings } from '@skiff/db';
import { hostCoveredBy, normalizeHost, readSshPrivateKey, sshFingerprint } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { requirePlatformAdmin } from '../../authz/policy.js';
import { DomainError, Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import { assertPlatformHostFree, lockServerHosts } from '../domains/host-owners.js';

type HostSettingsRecord = OutputOf<Contracts['settings']['get']>;
type CertificateType = 'acme' | 'none' | 'custom';

export interface PlatformSettingsOptions {
  /** The platform host's public address (`SKIFF_PUBLIC_IP`). */
  publicIp?: string;
  /** The address the HTTP API listens on (`SKIFF_HOST`). */
  listenHost?: string;
  /** Where the platform host's proxy sends the platform domain (`SKIFF_PLATFORM_UPSTREAM`). */
  platformUpstream?: string;
}

/** Addresses only the host itself reaches: a proxy container cannot. */
const isLoopback = (host: string) => /^(?:127(?:\.\d{1,3}){3}|::1|\[::1\]|localhost)$/i.test(host.trim());

const ROW = 'platform';

/**
 * The host settings: one row for the whole platform host (its own domain, which the platform
 * host's proxy serves, the container cleanup switch, the host's SSH private key). They affect
 * every organization on the host, so reading or changing them needs a platform administrator on
 * top of the contract's role or grant (only the public IP, `getIp`, stays with organization
 * admins). The SSH private key is sealed and never returned.
 */
export class PlatformSettingsService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly proxy: ProxyConfig,
    private readonly options: PlatformSettingsOptions = {},
  ) {}

  private get db() {
    return this.deps.db;
  }

  private record(row: PlatformSettings): HostSettingsRecord {
    return {
      host: row.host,
      certificateType: row.certificateType,
      letsEncryptEmail: row.letsEncryptEmail,
      https: row.https,
      enableContainerCleanup: row.enableContainerCleanup,
      hasSSHPrivateKey: row.sshPrivateKey !== null,
      sshPublicKey: row.sshPublicKey,
      sshKeyFingerprint: row.sshPublicKey === null ? null : sshFingerprint(row.sshPublicKey),
      publicIp: this.publicIp(),
      updatedAt: row.updatedAt === null ? null : new Date(row.updatedAt).toISOString(),
    };
  }

  private publicIp(): string | null {
    return this.options.publicIp || null;
  }

  private async row(): Promise<PlatformSettings> {
    return this.db.selectFrom('platformSettings').selectAll().where('id', '=', ROW).executeTakeFirstOrThrow();
  }

  private async write(changes: Partial<Omit<PlatformSettings, 'id' | 'updatedAt'>>, db = this.db): Promise<HostSettingsRecord> {
    const row = await db
      .updateTable('platformSettings')
      .set({ ...changes, updatedAt: this.deps.clock() })
      .where('id', '=', ROW)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(row);
  }

  /** Host settings change the platform for everyone on it: platform administrators only. */
  private assertPlatformAdmin(p: Principal) {
    requirePlatformAdmin(p, 'Host settings can be changed only by a platform administrator');
  }

  /** The platform's domain, its ACME address, the host's SSH key: platform administrators only. */
  async get(p: Principal) {
    requirePlatformAdmin(p, 'Host settings can be read only by a platform administrator');
    return this.record(await this.row());
  }

  /**
   * Lets an organization's compose stacks use host privileges on the platform host, or takes
   * it back (compose/host-privileges.ts): platform administrators only.
   */
  async trustOrganization(p: Principal, input: { organizationId: string; trusted: boolean }) {
    requirePlatformAdmin(p, 'Only a platform administrator can trust an organization on the platform host');
    const row = await this.db
      .updateTable('organizations')
      .set({ trustedOnPlatformHost: input.trusted })
      .where('id', '=', input.organizationId)
      .returning(['id', 'trustedOnPlatformHost'])
      .executeTakeFirst();
    if (!row) throw new DomainError('NOT_FOUND', 'No such organization');
    return { organizationId: row.id, trusted: row.trustedOnPlatformHost };
  }

  /** The platform host's public address: what an organization's own domains there point at, so any organization admin. */
  async getIp(_p: Principal) {
    return { ip: this.publicIp() };
  }

  async assignDomainServer(
    p: Principal,
    input: { host: string; certificateType: CertificateType; letsEncryptEmail?: string; https?: boolean },
  ) {
    this.assertPlatformAdmin(p);
    if (input.host.trim() === '') {
      // An empty host takes the platform domain back: the proxy stops routing it.
      const cleared = await this.proxy.change(this.db, [null], (tx) => this.write({ host: null }, tx));
      return { ...cleared, warnings: [] };
    }
    const host = normalizeHost(input.host);
    if (!host.ok) throw Invalid('host', host.reason);
    if (host.value.startsWith('*.')) throw Invalid('host', 'must be a single host name, not a wildcard');
    if (isIP(host.value)) throw Invalid('host', 'must be a domain name, not an IP address (the dashboard already answers on its IP)');

    const current = await this.row();
    const https = input.https ?? input.certificateType !== 'none';
    if (!https && input.certificateType !== 'none') {
      throw Invalid('https', `certificateType ${input.certificateType} needs https: true (certificateType none serves plain HTTP)`);
    }
    const letsEncryptEmail = input.letsEncryptEmail ?? current.letsEncryptEmail;
    if (input.certificateType === 'acme' && !letsEncryptEmail) {
      throw Invalid('letsEncryptEmail', 'required with certificateType acme: the ACME account address');
    }

    await assertPlatformHostFree(this.db, host.value);

    if (input.certificateType === 'custom') {
      const certificates = await this.db
        .selectFrom('certificates')
        .select('subjectNames')
        .where('organizationId', '=', p.organizationId)
        .where('serverId', 'is', null)
        .execute();
      if (!certificates.some((c) => hostCoveredBy(host.value, c.subjectNames))) {
        throw Invalid('certificateType', `no stored certificate covers ${host.value} on the platform host; add one with certificates.create`);
      }
    }

    // The platform host's proxy gets the domain in the same transaction; what it cannot serve is refused.
    // Checked again under the platform host's lock, so no route takes the host meanwhile.
    const saved = await this.proxy.change(this.db, [null], async (tx) => {
      await lockServerHosts(tx, [null]);
      await assertPlatformHostFree(tx, host.value);
      return this.write({ host: host.value, certificateType: input.certificateType, letsEncryptEmail, https }, tx);
    });
    return { ...saved, warnings: this.reachabilityWarnings() };
  }

  /** What keeps the platform host's proxy from reaching the control plane, as this process is configured. */
  private reachabilityWarnings(): string[] {
    const listen = this.options.listenHost;
    if (!listen || !isLoopback(listen)) return [];
    const upstream = this.options.platformUpstream ?? 'host.docker.internal:<SKIFF_PORT>';
    return [
      `the control plane listens on ${listen} only (SKIFF_HOST), so the proxy container cannot reach it at ${upstream} ` +
        '(SKIFF_PLATFORM_UPSTREAM) and the domain answers 502: restart it with SKIFF_HOST=0.0.0.0, or an address the container reaches',
    ];
  }

  async updateContainerCleanup(p: Principal, input: { enableContainerCleanup: boolean }) {
    this.assertPlatformAdmin(p);
    return this.write({ enableContainerCleanup: input.enableContainerCleanup });
  }

  async saveSSHPrivateKey(p: Principal, input: { sshPrivateKey: string }) {
    this.assertPlatformAdmin(p);
    const read = readSshPrivateKey(input.sshPrivateKey);
    if (!read.ok) throw Invalid('sshPrivateKey', read.message);
    const privateKey = input.sshPrivateKey.trim() + '\n';
    return this.write({ sshPrivateKey: this.deps.secrets.seal(privateKey), sshPublicKey: read.key.publicKey });
  }

  async cleanSSHPrivateKey(p: Principal) {
    this.assertPlatformAdmin(p);
    return this.write({ sshPrivateKey: null, sshPublicKey: null });
  }
}
