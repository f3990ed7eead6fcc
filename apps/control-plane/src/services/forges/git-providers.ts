import { createPrivateKey } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { ForgeKind, GitProvider } from '@skiff/db';
import { outboundUrlProblem, trimChar } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { assertOrganization, isAdmin } from '../../authz/policy.js';
import { Forbidden, Invalid, NotFound } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { IdentityService } from '../identity/identity.js';
import { flagOf } from '../shared/record-codec.js';

/** How one kind of forge connection is stored: which fields are plain, secret, URLs. */
interface ForgeSpec {
  label: string;
  idPrefix: string;
  /** Non-secret fields, kept in the `config` JSON and shown in the record (null when unset). */
  config: readonly string[];
  /** Write-only fields, kept sealed in the `secrets` JSON; the record shows `has<Field>`. */
  secrets: readonly string[];
  /** Config fields the platform will call: http(s), never link-local or cloud metadata. */
  outboundUrls: readonly string[];
  /** Config fields that are URLs the user's browser is sent to (OAuth callbacks). */
  browserUrls?: readonly string[];
  /** Values of config fields left unset. */
  defaults?: Record<string, unknown>;
}

export const FORGES: Record<ForgeKind, ForgeSpec> = {
  forgeA: {
    label: 'forgeA (GitHub App)',
    idPrefix: 'fga',
    config: ['appName', 'appId', 'clientId', 'installationId', 'apiUrl'],
    secrets: ['privateKey', 'clientSecret', 'webhookSecret', 'accessToken'],
    outboundUrls: ['apiUrl'],
    defaults: { apiUrl: 'https://api.github.com' },
  },
  forgeB: {
    label: 'forgeB (GitLab)',
    idPrefix: 'fgb',
    config: ['forgeBUrl', 'forgeBInternalUrl', 'applicationId', 'redirectUri', 'groupName'],
    secrets: ['secret', 'accessToken', 'refreshToken'],
    outboundUrls: ['forgeBUrl', 'forgeBInternalUrl'],
    browserUrls: ['redirectUri'],
  },
  forgeC: {
    label: 'forgeC (Bitbucket)',
    idPrefix: 'fgc',
    config: ['forgeCUsername', 'forgeCEmail', 'forgeCWorkspaceName', 'apiUrl'],
    secrets: ['appPassword', 'apiToken'],
    outboundUrls: ['apiUrl'],
    defaults: { apiUrl: 'https://api.bitbucket.org/2.0' },
  },
  forgeD: {
    label: 'forgeD (Gitea/Forgejo)',
    idPrefix: 'fgd',
    config: ['forgeDUrl', 'forgeDInternalUrl', 'clientId', 'redirectUri', 'organizationName'],
    secrets: ['clientSecret', 'accessToken'],
    outboundUrls: ['forgeDUrl', 'forgeDInternalUrl'],
    browserUrls: ['redirectUri'],
  },
};

const KINDS = Object.keys(FORGES) as ForgeKind[];

export type ForgeRecord<K extends ForgeKind> = OutputOf<Contracts[K]['one']>;
type Summary = OutputOf<Contracts['gitProvider']['remove']>;
type Values = Record<string, unknown>;

/**
 * Git forge connections of every kind, in one table: plain settings in `config`, credentials
 * sealed together in `secrets`. Owners and admins use every connection of the organization;
 * members need `canAccessToGitProviders` (on the contracts) and the connection's
 * `gitProviderId` in `accessedGitProviders` (creators are granted theirs).
 */
export class GitProviderService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly identity: IdentityService,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** The opened credentials of a connection (for its forge client; never for an answer). */
  openSecrets(row: GitProvider): Values {
    return JSON.parse(this.deps.secrets.open(row.secrets)) as Values;
  }

  private record<K extends ForgeKind>(kind: K, row: GitProvider): ForgeRecord<K> {
    const spec = FORGES[kind];
    const secrets = this.openSecrets(row);
    const out: Values = {
      [`${kind}Id`]: row.id,
      gitProviderId: row.gitProviderId,
      organizationId: row.organizationId,
      name: row.name,
      authId: row.authId,
      userId: row.userId,
      createdAt: new Date(row.createdAt).toISOString(),
    };
    for (const field of spec.config) out[field] = row.config[field] ?? spec.defaults?.[field] ?? null;
    for (const field of spec.secrets) out[flagOf(field)] = typeof secrets[field] === 'string' && secrets[field] !== '';
    return out as ForgeRecord<K>;
  }

  private summary(row: GitProvider): Summary {
    return {
      gitProviderId: row.gitProviderId,
      organizationId: row.organizationId,
      name: row.name,
      authId: row.authId,
      userId: row.userId,
      createdAt: new Date(row.createdAt).toISOString(),
      kind: row.kind,
      forgeId: row.id,
    };
  }

  private canUse(p: Principal, row: GitProvider) {
    return isAdmin(p) || p.permissions.accessedGitProviders.includes(row.gitProviderId);
  }

  /** `what`: the name an unknown id answers with, so another organization's answers the same. */
  private assertUsable(p: Principal, row: GitProvider, what: string) {
    assertOrganization(p, row.organizationId, what);
    if (!this.canUse(p, row)) throw Forbidden('No access to this git provider');
  }

  /** The connection of that kind, if the caller may use it (another organization's: NOT_FOUND). */
  async find(p: Principal, kind: ForgeKind, forgeId: string): Promise<GitProvider> {
    const row = await this.db.selectFrom('gitProviders').selectAll().where('id', '=', forgeId).executeTakeFirst();
    if (!row || row.kind !== kind) throw NotFound(`No such ${FORGES[kind].label} connection`);
    this.assertUsable(p, row, `${FORGES[kind].label} connection`);
    return row;
  }

  /** The new config and secrets after applying the fields given: undefined keeps, '' or null clears. */
  private merge(kind: ForgeKind, input: Values, config: Values, secrets: Values) {
    const spec = FORGES[kind];
    const nextConfig = { ...config };
    const nextSecrets = { ...secrets };
    for (const field of spec.config) {
      let value = input[field];
      if (value === undefined) continue;
      if (value === '' || value === null) {
        delete nextConfig[field];
        continue;
      }
      if (spec.outboundUrls.includes(field) || spec.browserUrls?.includes(field)) {
        const url = String(value).trim();
        const problem = spec.outboundUrls.includes(field) ? outboundUrlProblem(url) : browserUrlProblem(url);
        if (problem) throw Invalid(field, problem);
        value = trimChar(url, '/', 'end');
      }
      nextConfig[field] = value;
    }
    for (const field of spec.secrets) {
      const value = input[field];
      if (value === undefined) continue;
      if (value === '' || value === null) delete nextSecrets[field];
      else nextSecrets[field] = value;
    }
    if (kind === 'forgeA' && typeof input.privateKey === 'string') checkAppPrivateKey(input.privateKey);
    // A token given by hand has no known expiry (an OAuth one's is learnt at its next refresh).
    if (kind === 'forgeB' && input.accessToken !== undefined) delete nextSecrets.tokenExpiresAt;
    return { config: nextConfig, secrets: nextSecrets };
  }

  private async checkAuthId(p: Principal, authId: string) {
    const member = await this.db
      .selectFrom('members')
      .select('id')
      .where('userId', '=', authId)
      .where('organizationId', '=', p.organizationId)
      .executeTakeFirst();
    if (!member) throw Invalid('authId', 'no such member of this organization');
  }

  async create<K extends ForgeKind>(p: Principal, kind: K, input: Values & { authId: string; name: string }): Promise<ForgeRecord<K>> {
    const { config, secrets } = this.merge(kind, input, {}, {});
    checkCredentials(kind, config, secrets);
    await this.checkAuthId(p, input.authId);
    const gitProviderId = this.deps.ids('gp');
    const row = await this.db
      .insertInto('gitProviders')
      .values({
        id: this.deps.ids(FORGES[kind].idPrefix),
        gitProviderId,
        organizationId: p.organizationId,
        kind,
        name: input.name,
        authId: input.authId,
        userId: p.userId,
        config: JSON.stringify(config),
        secrets: this.deps.secrets.seal(JSON.stringify(secrets)),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.identity.grantCreated(p, { gitProviders: [gitProviderId] });
    return this.record(kind, row);
  }

  async one<K extends ForgeKind>(p: Principal, kind: K, forgeId: string): Promise<ForgeRecord<K>> {
    return this.record(kind, await this.find(p, kind, forgeId));
  }

  async update<K extends ForgeKind>(
    p: Principal,
    kind: K,
    input: Values & { gitProviderId: string; name: string; organizationId?: string },
  ): Promise<ForgeRecord<K>> {
    const row = await this.find(p, kind, String(input[`${kind}Id`]));
    if (input.gitProviderId !== row.gitProviderId) throw Invalid('gitProviderId', 'is not the gitProviderId of this connection');
    if (input.organizationId !== undefined && input.organizationId !== row.organizationId) {
      throw Invalid('organizationId', "must be the connection's own organization");
    }
    const { config, secrets } = this.merge(kind, input, row.config, this.openSecrets(row));
    checkCredentials(kind, config, secrets);
    const updated = await this.db
      .updateTable('gitProviders')
      .set({ name: input.name, config: JSON.stringify(config), secrets: this.deps.secrets.seal(JSON.stringify(secrets)) })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.record(kind, updated);
  }

  private async usable(p: Principal, kind?: ForgeKind): Promise<GitProvider[]> {
    let q = this.db.selectFrom('gitProviders').selectAll().where('organizationId', '=', p.organizationId);
    if (kind) q = q.where('kind', '=', kind);
    const rows = await q.orderBy('createdAt').orderBy('id').execute();
    return rows.filter((row) => this.canUse(p, row));
  }

  /** `<kind>Providers`: the caller's organization's connections of that kind they may use. */
  async list<K extends ForgeKind>(p: Principal, kind: K): Promise<ForgeRecord<K>[]> {
    return (await this.usable(p, kind)).map((row) => this.record(kind, row));
  }

  async all(p: Principal): Promise<Summary[]> {
    return (await this.usable(p)).map((row) => this.summary(row));
  }

  /** Removes a connection no application or compose stack uses as its source. */
  async remove(p: Principal, gitProviderId: string): Promise<Summary> {
    const row = await this.db.selectFrom('gitProviders').selectAll().where('gitProviderId', '=', gitProviderId).executeTakeFirst();
    if (!row) throw NotFound('No such git provider');
    this.assertUsable(p, row, 'git provider');
    for (const [table, what] of [
      ['applications', 'applications'],
      ['composeStacks', 'compose stacks'],
    ] as const) {
      const users = await this.db
        .selectFrom(table)
        .select('name')
        .where((eb) => eb.or(KINDS.map((k) => eb(`${k}Id`, '=', row.id))))
        .orderBy('name')
        .execute();
      if (users.length) {
        throw Invalid('gitProviderId', `still the source of ${what} ${users.map((u) => u.name).join(', ')}; change their source first`);
      }
    }
    await this.db.deleteFrom('gitProviders').where('id', '=', row.id).execute();
    return this.summary(row);
  }
}

/** A GitHub connection works through its App (id and key) or a token: one of them must be set. */
function checkCredentials(kind: ForgeKind, config: Values, secrets: Values) {
  if (kind !== 'forgeA' || (config.appId !== undefined && secrets.privateKey !== undefined) || secrets.accessToken !== undefined) return;
  throw Invalid('accessToken', 'required unless the App is given (appId and privateKey)');
}

/** An OAuth callback address: an http(s) URL. */
function browserUrlProblem(text: string): string | null {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? null : 'must be an http(s) URL';
  } catch {
    return 'must be an http(s) URL';
  }
}

/** A GitHub App's key: the PEM RSA private key the forge generated for it. */
function checkAppPrivateKey(text: string) {
  let type: string | undefined;
  try {
    type = createPrivateKey(text).asymmetricKeyType;
  } catch {
    throw Invalid('privateKey', 'must be the PEM private key generated for the App (-----BEGIN RSA PRIVATE KEY-----)');
  }
  if (type !== 'rsa') throw Invalid('privateKey', 'must be an RSA private key, as the forge generates for Apps');
}
