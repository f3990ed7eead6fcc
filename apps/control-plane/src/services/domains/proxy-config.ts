import type { Db } from '@skiff/db';
import {
  type BasicAuthUser,
  type CertificateType,
  type PlatformDomain,
  type ProxyCertificate,
  type ProxyRoute,
  composeUpstream,
  hostCoveredBy,
  randomizedName,
  wireServerId,
} from '@skiff/domain';
import { applyProxyConfigCommand } from '../../agents/outbound/kinds/apply-proxy-config.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DomainError, Invalid } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import { proxyCertificateId } from './proxy-certificate-id.js';
import { type ProxyInput, type SharedMiddlewares, check } from './proxy-check.js';
import type { ProxyRequests } from './proxy-requests.js';

export type { ProxyInput } from './proxy-check.js';

/** The records whose removal takes domains with it (foreign-key cascades). */
export type RouteOwner =
  | { applicationId: string }
  | { previewDeploymentId: string }
  | { composeId: string }
  | { environmentIds: string[] }
  | { organizationId: string };

/** The servers (null: the platform host) a change touches, or how to find them before it is made. */
export type AffectedServers = (string | null)[] | ((tx: Db) => Promise<(string | null)[]>);

/** The control plane as the platform host's proxy container reaches it by default (SKIFF_PLATFORM_UPSTREAM). */
export const defaultPlatformUpstream = (apiPort: number) => `host.docker.internal:${apiPort}`;

export interface ProxyConfigOptions {
  /** Where the platform host's proxy sends the platform's own domain, `host:port`; default `host.docker.internal:3000`. */
  platformUpstream?: string;
  /** Asks agents for their shared middlewares; without it a change naming middlewares is refused. */
  agents?: Pick<ProxyRequests, 'middlewareNames'>;
}

export interface ChangeOptions {
  /** The field a renderer refusal names (default: the field its reason is about). */
  field?: string;
  /**
   * The servers on which the change makes enabled routes name shared middlewares: their
   * agents are asked for the names before the transaction, and a name they do not declare (or
   * an agent that does not answer) refuses the change, naming `middlewares`.
   */
  middlewaresOn?: (string | null)[];
  /**
   * The organization making the change: a refusal that names a route of another organization
   * (on the platform host, several share a proxy) names it only as such.
   */
  organizationId?: string;
}

/**
 * The domain records' `certificateType` → the renderer's. The contract's values (libs/contracts
 * CertificateType: acme, none, custom) are the renderer's own. `letsencrypt`, the reference
 * API's name for a certificate the proxy obtains over ACME (from Let's Encrypt unless a resolver
 * names another CA), is what Skiff calls `acme`, so a record still holding it reads as acme.
 */
const CERTIFICATE_TYPES: Record<string, CertificateType> = { none: 'none', acme: 'acme', letsencrypt: 'acme', custom: 'custom' };

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
    private readonly options: ProxyConfigOptions = {},
  ) {}

  /**
   * Runs `write` in a transaction and queues, in it, the configuration of the servers it
   * affects (found before the write, so removed records still count). A renderer refusal is
   * BAD_REQUEST naming `options.field` (default: the field the reason is about).
   */
  async change<T>(db: Db, servers: AffectedServers, write: (tx: Db) => Promise<T>, options: ChangeOptions = {}): Promise<T> {
    // Asked before the transaction: an agent's answer (or its silence) holds no lock.
    const shared = await this.sharedMiddlewares(options.middlewaresOn ?? []);
    let queued = 0;
    const result = await db.transaction().execute(async (tx) => {
      const affected = typeof servers === 'function' ? await servers(tx) : servers;
      const value = await write(tx);
      queued = await this.proxyChanged(tx, affected, options.field, shared, options.organizationId);
      return value;
    });
    if (queued > 0) this.notify();
    return result;
  }

  /**
   * Inside a transaction: runs `remove`, which deletes records carrying domains, and queues the
   * configs of their servers. A renderer refusal names `field` (default: as its reason says).
   */
  async removing(tx: Db, owner: RouteOwner, remove: () => Promise<unknown>, field?: string): Promise<number> {
    const servers = await this.serversRoutingTo(tx, owner);
    await remove();
    return this.proxyChanged(tx, servers, field);
  }

  /**
   * Inside the transaction of a change: checks and queues the configuration of each server.
   * Answers how many commands were queued; call notify() after the commit when any were.
   * The middleware names of routes are checked on the servers in `shared` only (see check()).
   */
  async proxyChanged(tx: Db, serverIds: (string | null)[], field?: string, shared: SharedMiddlewares = new Map(), organizationId?: string): Promise<number> {
    const servers = new Map(serverIds.map((id) => [wireServerId(id), id]));
    // Sorted, so two changes lock the revision rows of the same servers in the same order.
    const wireIds = [...servers.keys()].sort();
    for (const wire of wireIds) {
      // The revision row is locked before the records are read: a change that committed while
      // this one waited for the lock is in the input, so a higher revision never carries less.
      const revision = await this.nextRevision(tx, wire);
      const input = await this.inputFor(tx, servers.get(wire) ?? null);
      try {
        check(input, field, shared.get(wire));
      } catch (err) {
        if (organizationId === undefined || !(err instanceof DomainError)) throw err;
        throw await this.redacted(tx, err, input, servers.get(wire) ?? null, organizationId);
      }
      await this.outbox.queue(tx, this.command(wire, input, revision));
    }
    return wireIds.length;
  }

  /** The refusal with each route of another organization than `organizationId` named only as such. */
  private async redacted(tx: Db, err: DomainError, input: ProxyInput, serverId: string | null, organizationId: string): Promise<DomainError> {
    let q = tx.selectFrom('domains').select('id').where('organizationId', '!=', organizationId);
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    const foreign = new Set((await q.execute()).map((r) => r.id));
    const labels = input.routes.filter((r) => foreign.has(r.domainId)).map((r) => `domain ${r.domainId} (${r.host})`);
    if (labels.length === 0) return err;
    const hide = (text: string) => labels.reduce((t, label) => t.split(label).join('a route of another organization'), text);
    return new DomainError(err.code, hide(err.message), err.issues.map((i) => ({ ...i, message: hide(i.message) })));
  }

  /** Commands were committed: the outbox wakes the relay. */
  notify(): void {
    this.outbox.notify();
  }

  /**
   * The servers (null: the platform host) with domains of the owner (an application's previews
   * included). An organization's: also those with its certificates, which the platform's own
   * domain may serve.
   */
  async serversRoutingTo(tx: Db, owner: RouteOwner): Promise<(string | null)[]> {
    let q = tx.selectFrom('domains').select('serverId').distinct();
    if ('composeId' in owner) q = q.where('composeId', '=', owner.composeId);
    else if ('previewDeploymentId' in owner) q = q.where('previewDeploymentId', '=', owner.previewDeploymentId);
    else if ('organizationId' in owner) {
      const rows = await q
        .where('organizationId', '=', owner.organizationId)
        .union(tx.selectFrom('certificates').select('serverId').where('organizationId', '=', owner.organizationId))
        .execute();
      return rows.map((r) => r.serverId);
    } else if ('environmentIds' in owner) {
      if (owner.environmentIds.length === 0) return [];
      const ids = owner.environmentIds;
      const applications = tx.selectFrom('applications').select('applications.id').where('applications.environmentId', 'in', ids);
      q = q.where((eb) =>
        eb.or([
          eb('applicationId', 'in', applications),
          eb('composeId', 'in', eb.selectFrom('composeStacks').select('composeStacks.id').where('composeStacks.environmentId', 'in', ids)),
          eb('previewDeploymentId', 'in', eb.selectFrom('previewDeployments').select('previewDeployments.id').where('previewDeployments.applicationId', 'in', applications)),
        ]),
      );
    } else {
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
   * certificates its custom routes use; on the platform host, the platform's own domain once
   * settings.assignDomainServer set one. No shared middlewares: the agent adds its own
   * (middlewares.json), as it adds the handlers of the platform's site (platform.json).
   */
  async inputFor(tx: Db, serverId: string | null): Promise<ProxyInput> {
    let q = tx
      .selectFrom('domains')
      .leftJoin('applications', 'applications.id', 'domains.applicationId')
      .leftJoin('previewDeployments', 'previewDeployments.id', 'domains.previewDeploymentId')
      .leftJoin('composeStacks', 'composeStacks.id', 'domains.composeId')
      .selectAll('domains')
      .select([
        'applications.appName as applicationAppName',
        'previewDeployments.appName as previewAppName',
        'composeStacks.appName as composeAppName',
        'composeStacks.randomize as composeRandomize',
        'composeStacks.suffix as composeSuffix',
      ]);
    q = serverId === null ? q.where('domains.serverId', 'is', null) : q.where('domains.serverId', '=', serverId);
    const domains = await q.orderBy('domains.createdAt').orderBy('domains.id').execute();

    const users = await this.basicAuthUsers(tx, [...new Set(domains.flatMap((d) => (d.applicationId ? [d.applicationId] : [])))]);
    const site = serverId === null ? await this.platformSite(tx) : null;
    const needsStored = domains.some((d) => d.certificateType === 'custom') || site?.certificateType === 'custom';
    const stored = needsStored ? await this.storedCertificates(tx, serverId) : [];
    const certificates = new Map<string, ProxyCertificate>();
    const serve = (chosen: (typeof stored)[number]) => {
      const id = proxyCertificateId(chosen);
      if (!certificates.has(id)) {
        certificates.set(id, {
          id,
          certificateChain: chosen.certificateData,
          privateKey: this.deps.secrets.open(chosen.privateKey),
          subjectNames: chosen.subjectNames,
        });
      }
      return id;
    };

    const routes = domains.map((d): ProxyRoute => {
      const certificateType = CERTIFICATE_TYPES[d.certificateType];
      if (!certificateType) throw Invalid('certificateType', `domain ${d.id} has an unknown certificateType ${JSON.stringify(d.certificateType)}`);
      let certificateId: string | null = null;
      if (certificateType === 'custom') {
        // Only the domain's own organization's certificates: the platform host serves several.
        const chosen = chooseCertificate(d.host, stored.filter((c) => c.organizationId === d.organizationId));
        if (chosen) certificateId = serve(chosen);
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
        upstream:
          (d.domainType === 'compose'
            ? composeServiceUpstream(d.composeAppName, d.serviceName, d.composeRandomize ? d.composeSuffix : null)
            : d.domainType === 'preview'
              ? d.previewAppName
              : d.applicationAppName) ?? '',
        basicAuth: d.applicationId ? (users.get(d.applicationId) ?? []) : [],
        certificateId,
      };
    });

    let platform: PlatformDomain | null = null;
    if (site) {
      let certificateId: string | null = null;
      if (site.certificateType === 'custom') {
        // The platform's domain belongs to the platform: only its administrators' organizations' certificates serve it.
        const platformOrganizations = await this.platformOrganizations(tx);
        const chosen = chooseCertificate(site.host, stored.filter((c) => platformOrganizations.has(c.organizationId)));
        if (chosen) certificateId = serve(chosen);
      }
      platform = { ...site, upstream: this.platformUpstream, certificateId };
    }
    return { routes, certificates: [...certificates.values()], platform, middlewares: {} };
  }

  private get platformUpstream(): string {
    return this.options.platformUpstream ?? defaultPlatformUpstream(3000);
  }

  /** The platform's own domain (settings.assignDomainServer), when one is set. */
  private async platformSite(tx: Db): Promise<Omit<PlatformDomain, 'upstream'> | null> {
    const row = await tx.selectFrom('platformSettings').select(['host', 'https', 'certificateType']).where('id', '=', 'platform').executeTakeFirst();
    if (!row?.host) return null;
    const certificateType = CERTIFICATE_TYPES[row.certificateType];
    if (!certificateType) throw Invalid('certificateType', `the platform domain has an unknown certificateType ${JSON.stringify(row.certificateType)}`);
    return { host: row.host, https: row.https, certificateType };
  }

  /** The organizations where a platform administrator acts as one (memberships flagged `platform_admin`). */
  private async platformOrganizations(tx: Db): Promise<Set<string>> {
    const rows = await tx
      .selectFrom('members')
      .innerJoin('users', 'users.id', 'members.userId')
      .select('members.organizationId')
      .distinct()
      .where('members.platformAdmin', '=', true)
      .where('users.isPlatformAdmin', '=', true)
      .execute();
    return new Set(rows.map((r) => r.organizationId));
  }

  /** The middleware names the servers' agents declare, asked in parallel; a failure is kept as its reason. */
  private async sharedMiddlewares(serverIds: (string | null)[]): Promise<SharedMiddlewares> {
    const shared: SharedMiddlewares = new Map();
    const servers = new Map(serverIds.map((id) => [wireServerId(id), id]));
    await Promise.all(
      [...servers].map(async ([wire, id]) => {
        const agents = this.options.agents;
        if (!agents) {
          shared.set(wire, new DomainError('BAD_REQUEST', 'the control plane has no channel to agents'));
          return;
        }
        try {
          shared.set(wire, await agents.middlewareNames(id));
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          shared.set(wire, err);
        }
      }),
    );
    return shared;
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

  private command(wireId: string, input: ProxyInput, revision: number) {
    return applyProxyConfigCommand({
      commandId: this.deps.ids('cmd'),
      serverId: wireId,
      inputJson: JSON.stringify(input),
      revision,
      createdAt: this.deps.clock(),
    });
  }
}

/**
 * The host the proxy dials for a compose service: its alias on the platform network,
 * `<service>.<appName>` (composeUpstream), with the service's deployed (randomized) name. The
 * agent gives a routed service that alias when the stack deploys (convertedCompose attaches the
 * services that domains name): a domain added to a service that was not routed before reaches
 * it from the stack's next deploy on.
 */
function composeServiceUpstream(appName: string | null, service: string | null, suffix: string | null): string | null {
  if (!appName || !service) return null;
  let deployed = service;
  if (suffix) {
    try {
      deployed = randomizedName(service, suffix);
    } catch {
      // A suffix the deploy would refuse too: the service keeps its name.
    }
  }
  return composeUpstream(appName, deployed);
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
