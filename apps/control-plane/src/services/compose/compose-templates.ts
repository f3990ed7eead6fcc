import { randomBytes } from 'node:crypto';
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Db, DomainsTable } from '@skiff/db';
import {
  type ComposeTemplate,
  MAX_TEMPLATE_BYTES,
  type ProcessedTemplate,
  TemplateError,
  appNameFrom,
  checkRoutePath,
  decodeTemplate,
  normalizeHost,
  outboundUrlProblem,
  parseDotenv,
  processTemplate,
  trimChar,
} from '@skiff/domain';
import { PUBLIC_ONLY } from '@skiff/outbound';
import type { Insertable } from 'kysely';
import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import { assertNoHostPrivileges } from './host-privileges.js';
import { assertHostPortsFree, claimHostPorts, stackHostPorts } from '../shared/published-ports.js';
import { Invalid } from '../../errors.js';
import type { ComposeService } from './compose.js';
import { configFilesProblem, sealConfigFiles } from './config-files.js';
import { type BundledCatalog, type TemplateSummary, TEMPLATE_ID } from './compose-templates-catalog.js';
import { OPERATOR_CATALOG } from './compose-templates-fetch.js';
import { RemoteCatalog, RemoteCatalogError, type RemoteCatalogLimits } from './compose-templates-remote.js';
import { type ServiceDeps, uniqueAs } from '../shared/deps.js';
import type { DomainService } from '../domains/domains.js';
import type { ProjectService } from '../projects/projects.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import { assertHostOwner, lockServerHosts } from '../domains/host-owners.js';
import type { ServiceAccess } from '../shared/service-access.js';

/** What `${domain}` reads in a template deployed where no domain can be generated. */
const NO_DOMAIN = 'localhost';

/** Queues a deploy of a compose stack, as `compose.deploy` does (the compose lifecycle). */
export interface ComposeDeployer {
  deploy(p: Principal, composeId: string): Promise<OutputOf<Contracts['compose']['deploy']>>;
}

export interface ComposeTemplateOptions {
  bundled: BundledCatalog;
  /** `SKIFF_TEMPLATES_URL`: the operator's catalog, merged over the bundled one. */
  remoteUrl?: string;
  limits?: Partial<RemoteCatalogLimits>;
  log: Logger;
  /** Absent: deployTemplate creates the stack and queues nothing (`deployment: null`). */
  deployer?: ComposeDeployer;
}

export const DEFAULT_CATALOG_LIMITS: RemoteCatalogLimits = {
  maxIndexBytes: 4 * 1024 * 1024,
  maxFileBytes: MAX_TEMPLATE_BYTES,
  timeoutMs: 10_000,
  cacheMs: 5 * 60_000,
};

/** Catalogs named by callers (`baseUrl`) kept at once; the oldest is dropped first. */
const MAX_NAMED_CATALOGS = 16;

type Stack = { id: string; serverId: string | null };

/** Where a stored file's problems point: the input field, and how its domains are named in messages. */
export interface StorePlace {
  field: string;
  domainsAt: string;
  /** The field a domain's problem names; default `field`. */
  domainsField?: string;
}

/** Template catalogs, and templates turned into compose stacks (REFERENCE.md, "Templates"). */
export class ComposeTemplateService {
  private readonly configured: RemoteCatalog | null;
  private readonly named = new Map<string, RemoteCatalog>();
  private readonly limits: RemoteCatalogLimits;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly projects: ProjectService,
    private readonly stacks: ComposeService,
    private readonly domains: DomainService,
    private readonly proxy: ProxyConfig,
    private readonly options: ComposeTemplateOptions,
  ) {
    this.limits = { ...DEFAULT_CATALOG_LIMITS, ...options.limits };
    this.configured = options.remoteUrl ? this.remote(catalogBase(options.remoteUrl), true) : null;
  }

  async templates(_p: Principal, input: { baseUrl?: string; tags?: string[] }): Promise<TemplateSummary[]> {
    const entries = await this.list(input.baseUrl);
    const wanted = new Set((input.tags ?? []).map((t) => t.trim().toLowerCase()).filter(Boolean));
    return wanted.size === 0 ? entries : entries.filter((e) => e.tags.some((t) => wanted.has(t)));
  }

  async tags(_p: Principal, input: { baseUrl?: string }): Promise<string[]> {
    const entries = await this.list(input.baseUrl);
    return [...new Set(entries.flatMap((e) => e.tags))].sort();
  }

  /** `compose.processTemplate`: what `import` would store, generated anew, nothing saved. */
  async process(p: Principal, input: { base64: string; composeId: string }): Promise<ProcessedTemplate> {
    const { row } = await this.access.find(p, 'compose', input.composeId);
    return this.resolve(p, decoded(input.base64), row.appName, row.serverId, 'base64');
  }

  /** `compose.import`: the template's compose file, env and domains, stored together. */
  async import(p: Principal, input: { base64: string; composeId: string }) {
    const { row, project } = await this.access.find(p, 'compose', input.composeId);
    const processed = await this.resolve(p, decoded(input.base64), row.appName, row.serverId, 'base64');
    return this.store(row, project.organizationId, processed, { field: 'base64', domainsAt: 'config.domains' });
  }

  /** `compose.deployTemplate`: a new stack from a catalog template, then its deploy queued. */
  async deployTemplate(p: Principal, input: { environmentId: string; id: string; serverId?: string; baseUrl?: string; host?: string }) {
    await this.projects.findEnvironment(p, input.environmentId);
    const serverId = input.serverId || null;
    await this.access.checkServer(p, serverId);
    const { entry, template } = await this.catalogTemplate(input.baseUrl, input.id);
    const appName = appNameFrom(entry.name);
    let host: string | undefined;
    if (input.host !== undefined) {
      const normalized = normalizeHost(input.host);
      if (!normalized.ok) throw Invalid('host', normalized.reason);
      if (normalized.value.startsWith('*.')) throw Invalid('host', 'must be a single host name, not a wildcard');
      host = normalized.value;
    }
    const warnings: string[] = [];
    const processed = await this.resolve(p, template, appName, serverId, 'id', { host, warnings });
    const created = await this.createStack(p, { environmentId: input.environmentId, serverId, name: entry.name, appName }, processed, { field: 'id', domainsAt: 'config.domains' });
    return { ...created, warnings };
  }

  /**
   * A new raw stack holding a processed compose file, its env and domains, then its deploy
   * queued: `compose.deployTemplate`, and `ai.deploy` with a suggestion. The caller has
   * checked the environment and the server. Problems name `place.field`, domains by
   * `place.domainsAt[index]`. Nothing stays behind when a step fails.
   */
  async createStack(
    p: Principal,
    stack: { environmentId: string; serverId: string | null; name: string; appName: string; description?: string },
    processed: ProcessedTemplate,
    place: StorePlace,
  ) {
    checkMounts(processed, place.field);
    await assertNoHostPrivileges(this.deps.db, p.organizationId, stack.serverId, processed.compose, place.field);
    await assertHostPortsFree(this.deps, stack.serverId, stackHostPorts(this.deps, processed.compose, parseDotenv(processed.env).variables, place.field), '', place.field);
    const created = await this.stacks.create(p, {
      name: stack.name,
      environmentId: stack.environmentId,
      serverId: stack.serverId,
      appName: stack.appName,
      description: stack.description,
      sourceType: 'raw',
      composeFile: processed.compose,
    });
    const undo = async (error: unknown): Promise<never> => {
      await this.stacks.delete(p, created.composeId).catch((err: unknown) => this.options.log.error({ err }, 'could not remove the stack of a failed deploy'));
      throw error;
    };
    const stored = await this.store({ id: created.composeId, serverId: stack.serverId }, p.organizationId, processed, place).catch(undo);
    const deployment = this.options.deployer ? await this.options.deployer.deploy(p, created.composeId).catch(undo) : null;
    return { ...stored, deployment };
  }

  /** The entries of the catalog a call names: `baseUrl`, or the bundled one merged with the operator's. */
  private async list(baseUrl: string | undefined): Promise<TemplateSummary[]> {
    const named = this.namedCatalog(baseUrl);
    if (named) return read(named.baseUrl, () => named.entries());
    if (!this.configured) return this.options.bundled.entries;
    const remote = await read(this.configured.baseUrl, () => this.configured!.entries());
    const replaced = new Map(remote.map((e) => [e.id, e]));
    const bundled = this.options.bundled.entries.map((e) => replaced.get(e.id) ?? e);
    const kept = new Set(bundled.map((e) => e.id));
    return [...bundled, ...remote.filter((e) => !kept.has(e.id))];
  }

  private async catalogTemplate(baseUrl: string | undefined, id: string): Promise<{ entry: TemplateSummary; template: ComposeTemplate }> {
    if (!TEMPLATE_ID.test(id)) throw Invalid('id', 'is not a template id (letters, digits, dot, underscore and hyphen)');
    const entry = (await this.list(baseUrl)).find((e) => e.id === id);
    if (!entry) throw Invalid('id', `the catalog has no template "${id}"`);
    if (entry.source === 'bundled') return { entry, template: this.options.bundled.templates.get(id)! };
    const catalog = this.namedCatalog(baseUrl) ?? this.configured!;
    try {
      const template = await catalog.template(id);
      if (!template) throw Invalid('id', `the catalog has no template "${id}"`);
      return { entry, template };
    } catch (error) {
      if (error instanceof RemoteCatalogError) throw Invalid('id', `template "${id}" could not be read: ${error.message}`);
      if (error instanceof TemplateError) throw Invalid('id', `template "${id}": ${error.message}`);
      throw error;
    }
  }

  /** The catalog of a `baseUrl`, or null for the default one. */
  private namedCatalog(baseUrl: string | undefined): RemoteCatalog | null {
    if (baseUrl === undefined || baseUrl.trim() === '') return null;
    const base = catalogBase(baseUrl);
    if (this.configured && base === this.configured.baseUrl) return this.configured;
    const problem = outboundUrlProblem(base);
    if (problem) throw Invalid('baseUrl', problem);
    const url = new URL(base);
    if (url.search || url.hash) throw Invalid('baseUrl', 'must not have a query or a fragment');
    let catalog = this.named.get(base);
    if (!catalog) {
      if (this.named.size >= MAX_NAMED_CATALOGS) this.named.delete(this.named.keys().next().value!);
      catalog = this.remote(base, false);
      this.named.set(base, catalog);
    }
    return catalog;
  }

  private remote(baseUrl: string, operator: boolean): RemoteCatalog {
    const log = this.options.log.child({ catalog: baseUrl });
    return new RemoteCatalog(baseUrl, operator ? OPERATOR_CATALOG : (this.deps.outbound ?? PUBLIC_ONLY), this.limits, {
      now: () => this.deps.clock().getTime(),
      onSkipped: (problems) => log.warn({ skipped: problems.slice(0, 20), count: problems.length }, 'template catalog entries skipped'),
      onStale: (reason) => log.warn({ reason }, 'template catalog could not be fetched again; using the last copy'),
    });
  }

  /**
   * The template's helpers and variables resolved for one stack; problems name `field`. With
   * `domains`, a deploy's: `${domain}` and host-less domains take `domains.host` when given;
   * when no domain can be generated either, the template goes without its generated domains
   * (`${domain}` reads `localhost`) and `domains.warnings` says why.
   */
  private async resolve(
    p: Principal,
    template: ComposeTemplate,
    appName: string,
    serverId: string | null,
    field: string,
    domains?: { host?: string; warnings: string[] },
  ): Promise<ProcessedTemplate> {
    // Asked only when the template wants a generated domain: it reads the server's address.
    const wanted = needsGeneratedDomain(template) && domains?.host === undefined;
    const hosts = wanted ? await this.domains.hostGenerator(p, appName, serverId) : null;
    const withoutDomain = domains !== undefined && hosts !== null && !('next' in hosts);
    let processed: ProcessedTemplate;
    try {
      processed = processTemplate(template, {
        randomBytes: (size) => randomBytes(size),
        generateDomain: () => {
          if (domains?.host !== undefined) return domains.host;
          if (hosts && 'next' in hosts) return hosts.next();
          if (withoutDomain) return NO_DOMAIN;
          throw new TemplateError(`no domain can be generated: ${hosts?.reason ?? 'unknown server'}`);
        },
      });
    } catch (error) {
      if (error instanceof TemplateError) throw Invalid(field, error.message);
      throw error;
    }
    if (!withoutDomain) return processed;
    const kept = processed.domains.filter((d) => d.host !== NO_DOMAIN);
    domains.warnings.push(
      `deployed without a domain: ${hosts.reason}; set it, or send \`host\`, to have one` +
        (kept.length < processed.domains.length ? ` (${processed.domains.length - kept.length} of the template's domains left out)` : ''),
    );
    return { ...processed, domains: kept };
  }

  /**
   * In one transaction with the proxy configuration of the stack's server: the compose file
   * (the stack becomes `raw`), the env, and the template's domains added.
   */
  private async store(stack: Stack, organizationId: string, processed: ProcessedTemplate, place: StorePlace) {
    const { field, domainsAt } = place;
    const domainsField = place.domainsField ?? field;
    checkMounts(processed, field);
    await assertNoHostPrivileges(this.deps.db, organizationId, stack.serverId, processed.compose, field);
    const ports = stackHostPorts(this.deps, processed.compose, parseDotenv(processed.env).variables, field);
    const routes = processed.domains.map((domain, index) => this.route(stack, organizationId, domain, domainsField, `${domainsAt}[${index}]`));
    const seen = new Set<string>();
    routes.forEach((r, index) => {
      const key = `${r.host}${r.path}`;
      if (seen.has(key)) throw Invalid(domainsField, `${domainsAt}[${index}]: ${key} is routed twice`);
      seen.add(key);
    });
    const { row, inserted } = await this.proxy.change(this.deps.db, [stack.serverId], async (tx) => {
      // The ports' lock before the proxy revisions' (the hosts'): every save taking both takes them in this order.
      await claimHostPorts(tx, this.deps, stack.serverId, ports, stack.id, field);
      if (routes.length) await lockServerHosts(tx, [stack.serverId]);
      for (const [index, r] of routes.entries()) {
        await assertRouteFree(tx, stack.serverId, r.host, r.path, domainsField, `${domainsAt}[${index}]`);
        await assertHostOwner(tx, stack.serverId, organizationId, r.host, domainsField, `${domainsAt}[${index}]: `);
      }
      const row = await tx
        .updateTable('composeStacks')
        .set({ composeFile: processed.compose, sourceType: 'raw', env: this.deps.secrets.seal(processed.env), configFiles: sealConfigFiles(this.deps.secrets, processed.mounts) })
        .where('id', '=', stack.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const inserted = routes.length
        ? await uniqueAs(domainsField, 'a domain is already routed on this server', () => tx.insertInto('domains').values(routes).returningAll().execute())
        : [];
      return { row, inserted };
    }, { organizationId });
    return { compose: this.stacks.record(row), domains: inserted.map(this.domains.record) };
  }

  /** A template domain as a domain row: plain HTTP to the service's port, routed at its path. */
  private route(stack: Stack, organizationId: string, domain: ProcessedTemplate['domains'][number], field: string, where: string): Insertable<DomainsTable> {
    const host = normalizeHost(domain.host);
    if (!host.ok) throw Invalid(field, `${where}.host: ${host.reason}`);
    const path = checkRoutePath(domain.path ?? '/');
    if (!path.ok) throw Invalid(field, `${where}.path: ${path.reason}`);
    if (/[{}*]/.test(path.value) || path.value.includes('//')) throw Invalid(field, `${where}.path: must not contain { } * or //`);
    return {
      id: this.deps.ids('dom'),
      organizationId,
      applicationId: null,
      composeId: stack.id,
      previewDeploymentId: null,
      serverId: stack.serverId,
      domainType: 'compose',
      host: host.value,
      path: path.value,
      internalPath: '/',
      serviceName: domain.serviceName,
      port: domain.port,
      https: false,
      certificateType: 'none',
      customCertResolver: null,
      customEntrypoint: null,
      stripPath: false,
      middlewares: null,
      forwardAuthEnabled: false,
      enabled: true,
    };
  }
}

/** One host + path per server, as domain.create keeps it. */
async function assertRouteFree(tx: Db, serverId: string | null, host: string, path: string, field: string, where: string) {
  let q = tx.selectFrom('domains').select('id').where('host', '=', host).where('path', '=', path);
  q = serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', serverId);
  if (await q.executeTakeFirst()) {
    throw Invalid(field, `${where}: ${host}${path === '/' ? '' : path} is already routed on this server`);
  }
}

function decoded(base64: string): ComposeTemplate {
  try {
    return decodeTemplate(base64);
  } catch (error) {
    if (error instanceof TemplateError) throw Invalid('base64', error.message);
    throw error;
  }
}

/** The files a stack keeps beside its compose file (config-files.ts), checked. */
function checkMounts(processed: ProcessedTemplate, field: string) {
  const problem = configFilesProblem(processed.mounts);
  if (problem) throw Invalid(field, `config.mounts: ${problem.replace(/^configFiles/, 'mounts')}`);
}

/** Whether processing will ask for a generated domain (`${domain}`, or a domain without a host). */
function needsGeneratedDomain(template: ComposeTemplate): boolean {
  const { config } = template;
  return config.domains.some((d) => d.host === null || d.host.trim() === '') || JSON.stringify(config).includes('${domain}');
}

/** A catalog URL as compared and joined: trimmed, without trailing slashes. */
function catalogBase(url: string): string {
  return trimChar(url.trim(), '/', 'end');
}

async function read<T>(baseUrl: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RemoteCatalogError) throw Invalid('baseUrl', `the template catalog ${baseUrl} could not be read: ${error.message}`);
    throw error;
  }
}
