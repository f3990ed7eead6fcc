import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Db, Domain } from '@skiff/db';
import { checkRoutePath, hostCoveredBy, normalizeHost } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { Invalid, NotFound } from '../../errors.js';
import { type ServiceDeps, uniqueAs } from '../shared/deps.js';
import { DomainHosts, type DomainOptions } from './domain-hosts.js';
import { assertHostOwner, lockServerHosts } from './host-owners.js';
import type { ProxyConfig } from './proxy-config.js';
import { RecordCodec } from '../shared/record-codec.js';
import type { ServiceAccess } from '../shared/service-access.js';

type DomainRecord = OutputOf<Contracts['domain']['one']>;
type DomainType = 'application' | 'compose' | 'preview';

/** The service a domain routes to, with what the domain copies from it. */
interface Owner {
  type: DomainType;
  applicationId: string | null;
  composeId: string | null;
  previewDeploymentId: string | null;
  serverId: string | null;
  organizationId: string;
}

/** The route fields of `domain.create` and `domain.update` (undefined: not given). */
export interface RouteInput {
  host: string;
  path?: string | null;
  port?: number | null;
  customEntrypoint?: string | null;
  https?: boolean;
  certificateType?: 'acme' | 'none' | 'custom';
  customCertResolver?: string | null;
  serviceName?: string | null;
  domainType?: string | null;
  internalPath?: string | null;
  stripPath?: boolean;
  middlewares?: string[] | null;
  forwardAuthEnabled?: boolean;
  enabled?: boolean;
}

export type { DomainOptions } from './domain-hosts.js';

const OWNER_FIELDS = ['applicationId', 'composeId', 'previewDeploymentId'] as const;
const TYPE_OF: Record<(typeof OWNER_FIELDS)[number], DomainType> = {
  applicationId: 'application',
  composeId: 'compose',
  previewDeploymentId: 'preview',
};
const DEFAULT_PORT = 3000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const MIDDLEWARE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;
const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** A route path as the proxy can match it: also no `{ }` (placeholders), `*` (wildcards) or `//`. */
function routePath(value: string, field: string): string {
  const checked = checkRoutePath(value);
  if (!checked.ok) throw Invalid(field, checked.reason);
  if (/[{}*]/.test(value)) throw Invalid(field, 'must not contain { } or *');
  if (value.includes('//')) throw Invalid(field, 'must not contain //');
  return checked.value;
}

/** The route columns of a domain as settle() checked them (`middlewares` as JSON text). */
type Settled = Record<string, unknown> & { enabled: boolean; forwardAuthEnabled: boolean; middlewares: string | null };

/** Domains of applications, compose services and previews; generated and validated names. */
export class DomainService {
  private readonly codec: RecordCodec<DomainRecord>;
  private readonly hosts: DomainHosts;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly proxy: ProxyConfig,
    options: DomainOptions = {},
  ) {
    this.codec = new RecordCodec<DomainRecord>(deps.secrets, {
      idField: 'domainId',
      json: ['middlewares'],
      hidden: ['organizationId'],
    });
    this.hosts = new DomainHosts(deps.db, options);
  }

  private get db() {
    return this.deps.db;
  }

  record = (row: Domain) => this.codec.record(row);

  async create(p: Principal, input: RouteInput & { applicationId?: string | null; composeId?: string | null; previewDeploymentId?: string | null }) {
    const given = OWNER_FIELDS.filter((f) => input[f] !== undefined && input[f] !== null && input[f] !== '');
    if (given.length === 0) throw Invalid('applicationId', 'one of applicationId, composeId or previewDeploymentId is required');
    if (given.length > 1) throw Invalid(given[1]!, `a domain belongs to one service: give only one of ${given.join(', ')}`);
    const field = given[0]!;
    const owner = await this.locate(p, TYPE_OF[field], input[field]!);
    const route = await this.settle(owner, input);
    const row = await this.write([owner.serverId], owner, route, (tx) =>
      tx
        .insertInto('domains')
        .values({
          id: this.deps.ids('dom'),
          organizationId: owner.organizationId,
          applicationId: owner.applicationId,
          composeId: owner.composeId,
          previewDeploymentId: owner.previewDeploymentId,
          serverId: owner.serverId,
          domainType: owner.type,
          ...route,
        } as never)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return this.record(row);
  }

  async one(p: Principal, domainId: string) {
    const { row } = await this.find(p, domainId);
    return this.record(row);
  }

  async update(p: Principal, input: RouteInput & { domainId: string }) {
    const { row, owner } = await this.find(p, input.domainId);
    const route = await this.settle(owner, input, row);
    const updated = await this.write([row.serverId, owner.serverId], owner, route, (tx) =>
      tx
        .updateTable('domains')
        .set({ ...route, serverId: owner.serverId } as never)
        .where('id', '=', row.id)
        .returningAll()
        .executeTakeFirstOrThrow(),
    );
    return this.record(updated);
  }

  async delete(p: Principal, domainId: string) {
    const { row } = await this.find(p, domainId);
    await this.proxy.change(this.db, [row.serverId], (tx) => tx.deleteFrom('domains').where('id', '=', row.id).execute(), { organizationId: row.organizationId });
    return this.record(row);
  }

  async byApplicationId(p: Principal, applicationId: string) {
    await this.access.find(p, 'application', applicationId);
    const rows = await this.db.selectFrom('domains').selectAll().where('applicationId', '=', applicationId).orderBy('createdAt').orderBy('id').execute();
    return rows.map(this.record);
  }

  async byComposeId(p: Principal, composeId: string) {
    await this.access.find(p, 'compose', composeId);
    const rows = await this.db.selectFrom('domains').selectAll().where('composeId', '=', composeId).orderBy('createdAt').orderBy('id').execute();
    return rows.map(this.record);
  }

  /** The domains of some previews, by preview id (for previewDeployment records). */
  async ofPreviews(previewIds: string[]): Promise<Map<string, DomainRecord[]>> {
    const out = new Map<string, DomainRecord[]>(previewIds.map((id) => [id, []]));
    if (previewIds.length === 0) return out;
    const rows = await this.db.selectFrom('domains').selectAll().where('previewDeploymentId', 'in', previewIds).orderBy('createdAt').orderBy('id').execute();
    for (const row of rows) out.get(row.previewDeploymentId!)?.push(this.record(row));
    return out;
  }

  generateDomain(p: Principal, input: { appName: string; serverId?: string }) {
    return this.hosts.generateDomain(p, input);
  }

  /** Fresh hosts for one service (templates' `${domain}`), or why none can be made on its server. */
  hostGenerator(p: Principal, appName: string, serverId: string | null) {
    return this.hosts.hostGenerator(p, appName, serverId);
  }

  canGenerateProxyMeDomains(p: Principal, serverId: string) {
    return this.hosts.canGenerateProxyMeDomains(p, serverId);
  }

  validateDomain(p: Principal, input: { domain: string; serverId?: string }) {
    return this.hosts.validateDomain(p, input);
  }

  /** A domain of the caller's organization, with the service it routes to (its access rules). */
  private async find(p: Principal, domainId: string): Promise<{ row: Domain; owner: Owner }> {
    const row = await this.db.selectFrom('domains').selectAll().where('id', '=', domainId).executeTakeFirst();
    if (!row || row.organizationId !== p.organizationId) throw NotFound('No such domain');
    const type = row.domainType as DomainType;
    const ownerId = type === 'application' ? row.applicationId : type === 'compose' ? row.composeId : row.previewDeploymentId;
    const owner = await this.locate(p, type, ownerId!);
    return { row, owner };
  }

  /** The service a domain routes to: found with ServiceAccess's organization and grant rules. */
  private async locate(p: Principal, type: DomainType, id: string): Promise<Owner> {
    const none = { applicationId: null, composeId: null, previewDeploymentId: null };
    if (type === 'compose') {
      const { row, project } = await this.access.find(p, 'compose', id);
      return { ...none, type, composeId: id, serverId: row.serverId, organizationId: project.organizationId };
    }
    let applicationId = id;
    if (type === 'preview') {
      const preview = await this.db.selectFrom('previewDeployments').select('applicationId').where('id', '=', id).executeTakeFirst();
      if (!preview) throw NotFound('No such preview deployment');
      applicationId = preview.applicationId;
    }
    const { row, project } =
      type === 'preview' ? await this.access.through(p, 'application', applicationId, 'preview deployment') : await this.access.find(p, 'application', applicationId);
    return type === 'preview'
      ? { ...none, type, previewDeploymentId: id, serverId: row.serverId, organizationId: project.organizationId }
      : { ...none, type, applicationId: id, serverId: row.serverId, organizationId: project.organizationId };
  }

  /**
   * The route columns of a domain as it will be: the fields given over the current row (or the
   * defaults), each checked, failures naming their field.
   */
  private async settle(owner: Owner, input: RouteInput, current?: Domain): Promise<Settled> {
    /** undefined keeps the current value (or the default); null resets to the default. */
    const pick = <T>(field: keyof RouteInput & keyof Domain, fallback: T): T => {
      const v = input[field];
      if (v === undefined) return current ? (current[field] as T) : fallback;
      if (v === null || v === '') return fallback;
      return v as T;
    };

    const host = normalizeHost(input.host);
    if (!host.ok) throw Invalid('host', host.reason);
    const path = routePath(pick('path', '/'), 'path');
    const internalPath = routePath(pick('internalPath', '/'), 'internalPath');

    if (input.domainType !== undefined && input.domainType !== null && input.domainType !== owner.type) {
      throw Invalid('domainType', `must be ${owner.type} for this domain`);
    }

    const serviceName = pick<string | null>('serviceName', null);
    if (owner.type === 'compose') {
      if (serviceName === null) throw Invalid('serviceName', 'required for a compose domain');
      if (!SERVICE_NAME.test(serviceName)) throw Invalid('serviceName', 'must be a compose service name (letters, digits, . _ -)');
    } else if (serviceName !== null) {
      throw Invalid('serviceName', 'only compose domains route to a service name');
    }
    const port = pick<number | null>('port', owner.type === 'compose' ? null : DEFAULT_PORT);
    if (port === null) throw Invalid('port', 'required for a compose domain');

    const certificateType = pick<string>('certificateType', 'none');
    const https = input.https ?? (certificateType !== 'none' ? true : current ? current.https : false);
    if (!https && certificateType !== 'none') {
      throw Invalid(input.https === false ? 'https' : 'certificateType', `certificateType ${certificateType} needs https: true (certificateType none serves plain HTTP)`);
    }
    let customCertResolver: string | null;
    if (input.customCertResolver !== undefined && input.customCertResolver !== null && input.customCertResolver !== '') {
      if (certificateType !== 'acme') throw Invalid('customCertResolver', 'only with certificateType acme');
      if (!NAME.test(input.customCertResolver)) throw Invalid('customCertResolver', 'must be a resolver name (letters, digits, . _ -)');
      customCertResolver = input.customCertResolver;
    } else if (input.customCertResolver === undefined && certificateType === 'acme') {
      customCertResolver = current?.customCertResolver ?? null;
    } else {
      customCertResolver = null;
    }
    const changed = !current || current.host !== host.value || current.certificateType !== certificateType;
    if (certificateType === 'custom' && changed) await this.assertCertificateCovers(owner, host.value);

    const customEntrypoint = pick<string | null>('customEntrypoint', null);
    if (customEntrypoint !== null && !NAME.test(customEntrypoint)) {
      throw Invalid('customEntrypoint', 'must be an entrypoint name (letters, digits, . _ -)');
    }
    const middlewares = pick<string[] | null>('middlewares', null);
    if (middlewares) {
      const bad = middlewares.find((m) => !MIDDLEWARE.test(m));
      if (bad !== undefined) throw Invalid('middlewares', `${JSON.stringify(bad)} is not a middleware name (letters, digits, . _ @ -)`);
      if (new Set(middlewares).size !== middlewares.length) throw Invalid('middlewares', 'each middleware may be named once');
    }

    const route = {
      host: host.value,
      path,
      internalPath,
      serviceName,
      port,
      https,
      certificateType,
      customCertResolver,
      customEntrypoint,
      stripPath: pick('stripPath', false),
      middlewares: middlewares === null ? null : JSON.stringify(middlewares),
      forwardAuthEnabled: pick('forwardAuthEnabled', false),
      enabled: pick('enabled', true),
    };
    await this.assertRouteFree(owner.serverId, route.host, route.path, current?.id);
    return route;
  }

  /** One host + path per server. */
  private async assertRouteFree(serverId: string | null, host: string, path: string, exceptId?: string) {
    let q = this.db.selectFrom('domains').select('id').where('host', '=', host).where('path', '=', path);
    q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
    if (exceptId) q = q.where('id', '!=', exceptId);
    if (await q.executeTakeFirst()) throw Invalid('host', `${host}${path === '/' ? '' : path} is already routed on this server`);
  }

  /** `certificateType: custom` serves a stored certificate: one must cover the host there. */
  private async assertCertificateCovers(owner: Owner, host: string) {
    let q = this.db.selectFrom('certificates').select('subjectNames').where('organizationId', '=', owner.organizationId);
    q = owner.serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', owner.serverId);
    const certificates = await q.execute();
    if (!certificates.some((c) => hostCoveredBy(host, c.subjectNames))) {
      throw Invalid('certificateType', `no stored certificate covers ${host} on this server; add one with certificates.create`);
    }
  }

  /**
   * Writes the domain and, in the same transaction, the proxy configuration of the servers it
   * touches. The host must be the owner's organization's on its server (assertHostOwner,
   * checked under the servers' lock). A route that names shared middlewares has them checked
   * against its server's.
   */
  private write(servers: (string | null)[], owner: Owner, route: Settled, run: (tx: Db) => Promise<Domain>): Promise<Domain> {
    const namesMiddlewares = route.enabled && (route.forwardAuthEnabled || (route.middlewares !== null && route.middlewares !== '[]'));
    return this.proxy.change(
      this.db,
      servers,
      async (tx) => {
        await lockServerHosts(tx, servers);
        await assertHostOwner(tx, owner.serverId, owner.organizationId, route.host as string);
        return uniqueAs('host', 'this host and path are already routed on this server', () => run(tx));
      },
      { middlewaresOn: namesMiddlewares ? [owner.serverId] : [], organizationId: owner.organizationId },
    );
  }
}
