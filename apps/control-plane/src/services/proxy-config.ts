import type { Db } from '@skiff/db';
import {
  type BasicAuthUser,
  CaddyConfigError,
  type CertificateType,
  type ProxyCertificate,
  type ProxyRoute,
  type ServerProxyInput,
  caddyConfig,
  hostCoveredBy,
  wireServerId,
} from '@skiff/domain';
import { type Command, CommandKind, timestampFromDate } from '@skiff/proto';
import { Invalid } from '../errors.js';
import type { CommandOutbox } from './command-outbox.js';
import type { ServiceDeps } from './deps.js';

/** What ApplyProxyConfig.input_json carries: a server's whole proxy input; the agent adds the options. */
export type ProxyInput = Omit<ServerProxyInput, 'options'>;

/** The records whose removal takes domains with it (foreign-key cascades). */
export type RouteOwner = { applicationId: string } | { previewDeploymentId: string } | { composeId: string };

/** The servers (null: the platform host) a change touches, or how to find them before it is made. */
export type AffectedServers = (string | null)[] | ((tx: Db) => Promise<(string | null)[]>);

/** Long enough for a server that is offline for days to get its configuration when it returns. */
export const PROXY_DEADLINE_MS = 7 * 24 * 60 * 60_000;

/**
 * The domain records' `certificateType` → the renderer's. The contract's values (libs/contracts
 * CertificateType: acme, none, custom) are the renderer's own. `letsencrypt`, the reference
 * API's name for a certificate the proxy obtains over ACME (from Let's Encrypt unless a resolver
 * names another CA), is what Skiff calls `acme`, so a record still holding it reads as acme.
 */
const CERTIFICATE_TYPES: Record<string, CertificateType> = { none: 'none', acme: 'acme', letsencrypt: 'acme', custom: 'custom' };

/**
 * Which input field a renderer refusal is about, from the reason after the route's label
 * (caddy-config.ts words them so). The first match wins.
 */
const FIELD_OF_REASON: [RegExp, string][] = [
  [/^(?:unknown )?middleware/, 'middlewares'],
  [/^basic-auth/, 'username'],
  [/^internalPath /, 'internalPath'],
  [/^path /, 'path'],
  [/^port /, 'port'],
  [/^upstream /, 'serviceName'],
  [/^(?:customCertResolver|unknown certificate resolver)/, 'customCertResolver'],
  [/^(?:unknown entrypoint|entrypoint )/, 'customEntrypoint'],
  [/^(?:certificate|no certificate|a wildcard host needs)|gets its certificate differently/, 'certificateType'],
];

/**
 * The reverse-proxy side of domain, security-entry and certificate changes: each change,
 * inside its own transaction, renders the new configuration of every server it touches
 * (refusing, as BAD_REQUEST naming the field, what the renderer refuses, so the change rolls
 * back) and queues one ApplyProxyConfig command per server with the server's next revision.
 */
export class ProxyConfig {
  constructor(
    private readonly deps: Pick<ServiceDeps, 'ids' | 'clock' | 'secrets'>,
    private readonly outbox: CommandOutbox,
    private readonly options: { onCommandQueued?: () => void } = {},
  ) {}

  /**
   * Runs `write` in a transaction and queues, in it, the configuration of the servers it
   * affects (found before the write, so removed records still count). A renderer refusal is
   * BAD_REQUEST naming `field` (default: the field the reason is about).
   */
  async change<T>(db: Db, servers: AffectedServers, write: (tx: Db) => Promise<T>, field?: string): Promise<T> {
    let queued = 0;
    const result = await db.transaction().execute(async (tx) => {
      const affected = typeof servers === 'function' ? await servers(tx) : servers;
      const value = await write(tx);
      queued = await this.proxyChanged(tx, affected, field);
      return value;
    });
    if (queued > 0) this.notify();
    return result;
  }

  /** Inside a transaction: runs `remove`, which deletes records carrying domains, and queues the configs of their servers. */
  async removing(tx: Db, owner: RouteOwner, remove: () => Promise<unknown>): Promise<number> {
    const servers = await this.serversRoutingTo(tx, owner);
    await remove();
    return this.proxyChanged(tx, servers);
  }

  /**
   * Inside the transaction of a change: checks and queues the configuration of each server.
   * Answers how many commands were queued; call notify() after the commit when any were.
   */
  async proxyChanged(tx: Db, serverIds: (string | null)[], field?: string): Promise<number> {
    const servers = new Map(serverIds.map((id) => [wireServerId(id), id]));
    // Sorted, so two changes lock the revision rows of the same servers in the same order.
    const wireIds = [...servers.keys()].sort();
    for (const wire of wireIds) {
      // The revision row is locked before the records are read: a change that committed while
      // this one waited for the lock is in the input, so a higher revision never carries less.
      const revision = await this.nextRevision(tx, wire);
      const input = await this.inputFor(tx, servers.get(wire) ?? null);
      check(input, field);
      await this.outbox.queue(tx, this.command(wire, input, revision));
    }
    return wireIds.length;
  }

  notify(): void {
    this.options.onCommandQueued?.();
  }

  /** The servers (null: the platform host) with domains of the owner (an application's previews included). */
  async serversRoutingTo(tx: Db, owner: RouteOwner): Promise<(string | null)[]> {
    let q = tx.selectFrom('domains').select('serverId').distinct();
    if ('composeId' in owner) q = q.where('composeId', '=', owner.composeId);
    else if ('previewDeploymentId' in owner) q = q.where('previewDeploymentId', '=', owner.previewDeploymentId);
    else {
      const id = owner.applicationId;
      q = q.where((eb) =>
        eb.or([
          eb('applicationId', '=', id),
          eb('previewDeploymentId', 'in', eb.selectFrom('previewDeployments').select('id').where('applicationId', '=', id)),
        ]),
      );
    }
    return (await q.execute()).map((r) => r.serverId);
  }

  /**
   * The server's proxy input from the records: every domain routed there, enabled or not (the
   * renderer leaves disabled ones out), with the basic-auth users of its application and the
   * certificates its custom routes use. No platform domain and no shared middlewares yet.
   */
  async inputFor(tx: Db, serverId: string | null): Promise<ProxyInput> {
    let q = tx
      .selectFrom('domains')
      .leftJoin('applications', 'applications.id', 'domains.applicationId')
      .leftJoin('previewDeployments', 'previewDeployments.id', 'domains.previewDeploymentId')
      .selectAll('domains')
      .select(['applications.appName as applicationAppName', 'previewDeployments.appName as previewAppName']);
    q = serverId === null ? q.where('domains.serverId', 'is', null) : q.where('domains.serverId', '=', serverId);
    const domains = await q.orderBy('domains.createdAt').orderBy('domains.id').execute();

    const users = await this.basicAuthUsers(tx, [...new Set(domains.flatMap((d) => (d.applicationId ? [d.applicationId] : [])))]);
    const stored = domains.some((d) => d.certificateType === 'custom') ? await this.storedCertificates(tx, serverId) : [];
    const certificates = new Map<string, ProxyCertificate>();

    const routes = domains.map((d): ProxyRoute => {
      const certificateType = CERTIFICATE_TYPES[d.certificateType];
      if (!certificateType) throw Invalid('certificateType', `domain ${d.id} has an unknown certificateType ${JSON.stringify(d.certificateType)}`);
      let certificateId: string | null = null;
      if (certificateType === 'custom') {
        // Only the domain's own organization's certificates: the platform host serves several.
        const chosen = chooseCertificate(d.host, stored.filter((c) => c.organizationId === d.organizationId));
        if (chosen) {
          certificateId = chosen.id;
          if (!certificates.has(chosen.id)) {
            certificates.set(chosen.id, {
              id: chosen.id,
              certificateChain: chosen.certificateData,
              privateKey: this.deps.secrets.open(chosen.privateKey),
              subjectNames: chosen.subjectNames,
            });
          }
        }
      }
      return {
        domainId: d.id,
        host: d.host,
        path: d.path,
        port: d.port,
        https: d.https,
        certificateType,
        customCertResolver: d.customCertResolver,
        customEntrypoint: d.customEntrypoint,
        internalPath: d.internalPath,
        stripPath: d.stripPath,
        middlewares: middlewareNames(d.middlewares),
        forwardAuthEnabled: d.forwardAuthEnabled,
        enabled: d.enabled,
        upstream: (d.domainType === 'compose' ? d.serviceName : d.domainType === 'preview' ? d.previewAppName : d.applicationAppName) ?? '',
        basicAuth: d.applicationId ? (users.get(d.applicationId) ?? []) : [],
        certificateId,
      };
    });
    return { routes, certificates: [...certificates.values()], platform: null, middlewares: {} };
  }

  private async basicAuthUsers(tx: Db, applicationIds: string[]): Promise<Map<string, BasicAuthUser[]>> {
    const out = new Map<string, BasicAuthUser[]>();
    if (applicationIds.length === 0) return out;
    const rows = await tx
      .selectFrom('securityEntries')
      .select(['applicationId', 'username', 'passwordHash'])
      .where('applicationId', 'in', applicationIds)
      .orderBy('username')
      .execute();
    for (const r of rows) out.set(r.applicationId, [...(out.get(r.applicationId) ?? []), { username: r.username, passwordHash: r.passwordHash }]);
    return out;
  }

  private async storedCertificates(tx: Db, serverId: string | null) {
    let q = tx.selectFrom('certificates').select(['id', 'organizationId', 'certificateData', 'privateKey', 'subjectNames']);
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    return q.orderBy('id').execute();
  }

  private async nextRevision(tx: Db, wireId: string): Promise<number> {
    const row = await tx
      .insertInto('proxyRevisions')
      .values({ serverId: wireId, revision: 1 })
      .onConflict((oc) => oc.column('serverId').doUpdateSet((eb) => ({ revision: eb('proxyRevisions.revision', '+', 1) })))
      .returning('revision')
      .executeTakeFirstOrThrow();
    return Number(row.revision);
  }

  private command(wireId: string, input: ProxyInput, revision: number): Command {
    const now = this.deps.clock();
    return {
      commandId: this.deps.ids('cmd'),
      serverId: wireId,
      kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG,
      workloadKey: proxyWorkloadKey(wireId),
      deadline: timestampFromDate(new Date(now.getTime() + PROXY_DEADLINE_MS)),
      createdAt: timestampFromDate(now),
      payload: { $case: 'applyProxyConfig', value: { inputJson: JSON.stringify(input), revision: String(revision) } },
    };
  }
}

/** The FIFO queue of a server's proxy on its agent. */
export const proxyWorkloadKey = (wireServerId: string) => `proxy:${wireServerId}`;

/**
 * Renders the input as the agent will, to refuse what it would refuse. Resolver and entrypoint
 * names belong to the agent's options, which the control plane does not hold yet: the check
 * declares every name the routes use, and leaves judging them to the agent.
 */
function check(input: ProxyInput, field: string | undefined): void {
  for (const r of input.routes) {
    if (r.enabled && r.certificateType === 'custom' && !r.certificateId) {
      throw Invalid(field ?? 'certificateType', `domain ${r.domainId} (${r.host}): no stored certificate covers ${r.host} on this server`);
    }
  }
  const resolvers = new Set(input.routes.flatMap((r) => (r.customCertResolver ? [r.customCertResolver] : [])));
  const entrypoints = [...new Set(input.routes.flatMap((r) => (r.customEntrypoint ? [r.customEntrypoint] : [])))].sort();
  try {
    caddyConfig({
      ...input,
      options: {
        adminSocket: '/run/caddy/admin.sock',
        certResolvers: Object.fromEntries([...resolvers].map((name) => [name, { module: 'internal' as const }])),
        entrypoints: Object.fromEntries(entrypoints.map((name, i) => [name, 20_000 + i])),
      },
    });
  } catch (err) {
    if (!(err instanceof CaddyConfigError)) throw err;
    throw Invalid(field ?? fieldOf(err.message), err.message);
  }
}

function fieldOf(message: string): string {
  const reason = message.replace(/^(?:domain [^ ]+ \([^)]*\)|platform domain \([^)]*\)): /, '');
  return FIELD_OF_REASON.find(([pattern]) => pattern.test(reason))?.[1] ?? 'host';
}

/** The renderer's choice, among the given certificates covering the host: an exact name before a wildcard, then by id. */
function chooseCertificate<C extends { id: string; subjectNames: string[] }>(host: string, certificates: C[]): C | undefined {
  const exact = (c: C) => c.subjectNames.some((n) => n.toLowerCase() === host);
  return certificates
    .filter((c) => hostCoveredBy(host, c.subjectNames))
    .sort((a, b) => Number(!exact(a)) - Number(!exact(b)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
}

/** The stored jsonb list (a JSON text from drivers that do not parse it). */
function middlewareNames(stored: unknown): string[] | null {
  const value = typeof stored === 'string' ? JSON.parse(stored) : stored;
  return Array.isArray(value) ? value.map(String) : null;
}
