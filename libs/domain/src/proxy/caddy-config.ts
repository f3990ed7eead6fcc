/**
 * The whole Caddy JSON config of one server, for the admin API's `POST /load`.
 *
 * Caddy 2.6 JSON structures used (caddyserver.com/docs/json/):
 * - `admin.listen` as `unix//<path>` and `admin.config.persist: false` (the agent keeps the
 *   last good config itself); optional top-level `storage` (`file_system`, `root`).
 * - `apps.http.http_port` / `https_port` (which listener automatic HTTPS treats as which) and
 *   `apps.http.servers.<name>`: `listen`, `routes`, `automatic_https` (`disable`,
 *   `disable_redirects`, `skip_certificates`), `tls_connection_policies` (`match.sni`,
 *   `certificate_selection.any_tag`).
 * - Routes: `match` with `host` and `path` matchers, `handle`, `terminal`. Handlers:
 *   `subroute` (`routes`), `authentication` (`providers.http_basic`: `accounts` of
 *   `username` + base64 of the bcrypt hash, as 2.6 expects, `hash.algorithm: bcrypt`,
 *   `realm`), `rewrite` (`strip_path_prefix`, `uri`), `reverse_proxy` (`upstreams[].dial`,
 *   `load_balancing`: see overTaskSwaps), `map` (`source`, `destinations`, `mappings` of
 *   `input` + `outputs`, `defaults`), with the `vars` matcher on a placeholder,
 *   `static_response` (`status_code`, `headers`), `metrics`.
 * - `apps.tls.certificates.load_pem` (`certificate`, `key`, `tags`) and
 *   `apps.tls.automation.policies` (`subjects`, `issuers` of module `acme` with `email`, `ca`,
 *   or `internal`).
 *
 * Layout (the routes of each server: caddy-servers.ts, hosts sharing a handler chain share a
 * route, their upstreams and internalPaths set per host by a `map` handler): server `http` listens on the HTTP port and serves plain-HTTP routes and the
 * explicit 308 redirects of HTTPS routes (its automatic HTTPS is off; Caddy still answers
 * ACME HTTP challenges there before any route). Server `https` holds the HTTPS routes; its
 * automatic HTTPS manages the `acme` hosts (by the automation policies) and adds no redirects
 * of its own; `custom` hosts are in `skip_certificates` and served by tagged loaded
 * certificates. Each `customEntrypoint` is a server `entrypoint-<name>` of its own, and the
 * dashboard (`options.dashboard`) is server `skiff_dashboard` (dashboard-server.ts). The
 * platform domain's own handlers run before its reverse_proxy. Shared middlewares no enabled
 * domain names, and `standbyHandlers`, sit in a never-matching last route of server `http`
 * (standby-route.ts), so Caddy checks them at every load. Global options are merged
 * over the result by the caller (global-options.ts).
 */
import { checkRoutePath, hostCoveredBy, normalizeHost } from '../hosts.js';
import { CaddyConfigError } from './caddy-error.js';
import type {
  BasicAuthUser,
  CaddyHandler,
  IssuerOption,
  PlatformDomain,
  ProxyCertificate,
  ProxyRoute,
  ServerProxyInput,
} from './caddy-input.js';
import { DASHBOARD_SERVER, dashboardServer } from './dashboard-server.js';
import { isCaddyHandler } from './handlers.js';
import { standbyHandlers, standbyRoute } from './standby-route.js';
import { type Chain, type Entry, type Json, type Tls, compare, fixedChain, serverRoutes, sorted, tlsApp, tlsServer } from './caddy-servers.js';

export type * from './caddy-input.js';
export { CaddyConfigError } from './caddy-error.js';
export { DASHBOARD_PATH, DASHBOARD_SERVER } from './dashboard-server.js';
export { isCaddyHandler, isCaddyHandlerList } from './handlers.js';
export { mergeGlobalOptions } from './global-options.js';

export type CaddyConfig = Json;

const DEFAULT_SERVICE_PORT = 3000;
const FORWARD_AUTH = 'forward-auth';
const UPSTREAM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const DIAL = /^(?:[A-Za-z0-9][A-Za-z0-9._-]*|\[[0-9A-Fa-f:.]+\]):\d{1,5}$/;
const BCRYPT = /^\$2[aby]?\$\d\d\$[./A-Za-z0-9]{53}$/;
const SOCKET_PATH = /^\/[A-Za-z0-9._/-]+$/;
/** Characters Caddy would read as placeholders or matcher wildcards. */
const PATH_SPECIAL = /[{}*]/;

const fail = (message: string): never => {
  throw new CaddyConfigError(message);
};

export function caddyConfig(input: ServerProxyInput): CaddyConfig {
  const options = input.options;
  const httpPort = port(options.httpPort ?? 80, 'options.httpPort');
  const httpsPort = port(options.httpsPort ?? 443, 'options.httpsPort');
  const redirectPort = port(options.redirectHttpsPort ?? httpsPort, 'options.redirectHttpsPort');
  if (httpPort === httpsPort) fail('options.httpPort and options.httpsPort must differ');
  if (!SOCKET_PATH.test(options.adminSocket ?? '')) {
    fail('options.adminSocket must be an absolute unix socket path (letters, digits, . _ - /)');
  }
  const dashboardPort = options.dashboard ? port(options.dashboard.port, 'options.dashboard.port') : null;
  if (dashboardPort === httpPort || dashboardPort === httpsPort) fail('options.dashboard.port must differ from the HTTP and HTTPS ports');
  const entrypoints = checkEntrypoints(options.entrypoints ?? {}, [httpPort, httpsPort, ...(dashboardPort ? [dashboardPort] : [])]);
  const issuers = new Map<string, IssuerOption>([['default', defaultIssuer(input)], ['self-signed', { module: 'internal' }]]);
  for (const [name, issuer] of sorted(Object.entries(options.certResolvers ?? {}))) issuers.set(`resolver:${name}`, issuer);

  const certificates = new Map(input.certificates.map((c) => [c.id, c]));
  const entries = input.routes
    .filter((r) => r.enabled)
    .map((r) => routeEntry(r, input, certificates, entrypoints));
  if (input.platform) entries.push(platformEntry(input.platform, certificates));
  checkConflicts(entries, issuers);

  const servers: Json = {};
  const plain = entries.filter((e) => e.entrypoint === null);
  const httpRoutes = serverRoutes(plain, (e) => (e.https ? fixedChain([redirect(redirectPort)]) : e.chain));
  const standby = standbyHandlers(input, middlewareNames);
  if (standby.length > 0) httpRoutes.push(standbyRoute(standby));
  servers.http = { listen: [`:${httpPort}`], routes: httpRoutes, automatic_https: { disable: true } };
  const secure = plain.filter((e) => e.https);
  if (secure.length > 0) servers.https = tlsServer(httpsPort, secure);
  for (const [name, entrypointPort] of entrypoints) {
    const own = entries.filter((e) => e.entrypoint === name);
    if (own.length === 0) continue;
    const mixed = own.find((e) => e.https !== own[0]!.https);
    if (mixed) fail(`${mixed.label}: entrypoint ${name} cannot serve HTTPS and plain HTTP routes together (${own[0]!.label})`);
    servers[`entrypoint-${name}`] = own[0]!.https
      ? tlsServer(entrypointPort, own)
      : { listen: [`:${entrypointPort}`], routes: serverRoutes(own, (e) => e.chain), automatic_https: { disable: true } };
  }
  if (dashboardPort) servers[DASHBOARD_SERVER] = dashboardServer(dashboardPort);

  const config: Json = { admin: { listen: `unix/${options.adminSocket}`, config: { persist: false } } };
  if (options.storageRoot) config.storage = { module: 'file_system', root: options.storageRoot };
  const apps: Json = { http: { http_port: httpPort, https_port: httpsPort, servers } };
  const tls = tlsApp(entries, certificates, issuers);
  if (tls) apps.tls = tls;
  config.apps = apps;
  return config;
}

function port(value: number, what: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 65535) fail(`${what} must be a port (1-65535), got ${value}`);
  return value;
}

function checkEntrypoints(given: Record<string, number>, taken: number[]): Map<string, number> {
  const result = new Map<string, number>();
  const used = new Set(taken);
  for (const [name, p] of sorted(Object.entries(given))) {
    port(p, `entrypoint ${name}`);
    if (used.has(p)) fail(`entrypoint ${name}: port ${p} is already used by another listener`);
    used.add(p);
    result.set(name, p);
  }
  return result;
}

function defaultIssuer(input: ServerProxyInput): IssuerOption {
  const issuer = input.options.issuer ?? { module: 'acme' };
  if (issuer.module === 'acme' && !issuer.email && input.options.acmeEmail) return { ...issuer, email: input.options.acmeEmail };
  return issuer;
}

function routeEntry(
  route: ProxyRoute,
  input: ServerProxyInput,
  certificates: Map<string, ProxyCertificate>,
  entrypoints: Map<string, number>,
): Entry {
  const host = normalizeHost(route.host ?? '');
  const rawPath = route.path || '/';
  const label = `domain ${route.domainId} (${route.host}${rawPath === '/' ? '' : rawPath})`;
  const bad = (message: string): never => fail(`${label}: ${message}`);
  if (!host.ok) bad(`host ${host.reason}`);
  const hostName = (host as { value: string }).value;
  const path = routePath(rawPath, 'path', bad);
  const internalPath = routePath(route.internalPath || '/', 'internalPath', bad);
  const servicePort = route.port ?? DEFAULT_SERVICE_PORT;
  if (!Number.isInteger(servicePort) || servicePort < 1 || servicePort > 65535) bad(`port must be 1-65535, got ${servicePort}`);
  if (!UPSTREAM.test(route.upstream ?? '')) bad(`upstream ${JSON.stringify(route.upstream)} is not a service name`);
  if (!route.https && route.certificateType !== 'none') bad(`certificateType ${route.certificateType} needs https`);
  if (route.customCertResolver && route.certificateType !== 'acme') bad('customCertResolver only goes with certificateType acme');
  if (route.customEntrypoint !== null && route.customEntrypoint !== undefined && !entrypoints.has(route.customEntrypoint)) {
    bad(`unknown entrypoint ${JSON.stringify(route.customEntrypoint)}`);
  }

  let tls: Tls | null = null;
  if (route.https) {
    if (route.certificateType === 'custom') {
      tls = { kind: 'custom', certificateId: certificateFor(hostName, route.certificateId, certificates, bad) };
    } else if (route.certificateType === 'acme') {
      const resolver = route.customCertResolver;
      if (resolver && !Object.hasOwn(input.options.certResolvers ?? {}, resolver)) bad(`unknown certificate resolver ${JSON.stringify(resolver)}`);
      tls = { kind: 'issuer', key: resolver ? `resolver:${resolver}` : 'default' };
    } else {
      // https without a certificate type: Caddy's local CA, as Traefik serves its default certificate.
      tls = { kind: 'issuer', key: 'self-signed' };
    }
  }

  const leading: CaddyHandler[] = [];
  if (route.basicAuth.length > 0) leading.push(basicAuth(route.basicAuth, input.options.basicAuthRealm ?? 'Restricted', bad));
  for (const handler of middlewareHandlers(route, input.middlewares, bad)) leading.push(handler);
  if (route.stripPath && path !== '/') leading.push({ handler: 'rewrite', strip_path_prefix: path });
  // The upstream and internalPath were checked above to hold no `{`: as map outputs they are expanded as placeholders.
  const values: Record<string, string> = { dial: `${route.upstream}:${servicePort}` };
  if (internalPath !== '/') values.prefix = internalPath;
  const chain: Chain = {
    values,
    build: (value) => [
      ...leading.map((h) => structuredClone(h)),
      ...(internalPath !== '/' ? [{ handler: 'rewrite', uri: `${value('prefix')}{http.request.uri.path}` }] : []),
      reverseProxy(value('dial')),
    ],
  };
  return { label, host: hostName, path, https: route.https, tls, entrypoint: route.customEntrypoint ?? null, chain };
}

function platformEntry(platform: PlatformDomain, certificates: Map<string, ProxyCertificate>): Entry {
  const label = `platform domain (${platform.host})`;
  const bad = (message: string): never => fail(`${label}: ${message}`);
  const host = normalizeHost(platform.host ?? '');
  if (!host.ok) bad(`host ${host.reason}`);
  const hostName = (host as { value: string }).value;
  if (hostName.startsWith('*.')) bad('must not be a wildcard');
  if (!DIAL.test(platform.upstream ?? '')) bad(`upstream ${JSON.stringify(platform.upstream)} is not host:port`);
  if (!platform.https && platform.certificateType !== 'none') bad(`certificateType ${platform.certificateType} needs https`);
  let tls: Tls | null = null;
  if (platform.https) {
    tls =
      platform.certificateType === 'custom'
        ? { kind: 'custom', certificateId: certificateFor(hostName, platform.certificateId, certificates, bad) }
        : { kind: 'issuer', key: platform.certificateType === 'acme' ? 'default' : 'self-signed' };
  }
  const own = platform.handlers ?? [];
  if (!Array.isArray(own)) bad('handlers must be a list of Caddy handlers');
  for (const [i, h] of own.entries()) {
    if (!isCaddyHandler(h)) bad(`handler ${i + 1} must be a Caddy handler, an object with a "handler" name`);
  }
  const chain = fixedChain([...own.map((h) => structuredClone(h)), reverseProxy(platform.upstream)]);
  return { label, host: hostName, path: '/', https: platform.https, tls, entrypoint: null, chain };
}

/** A public or internal path without a trailing slash (except `/`). */
function routePath(value: string, field: string, bad: (m: string) => never): string {
  const checked = checkRoutePath(value);
  if (!checked.ok) bad(`${field} ${checked.reason}`);
  if (PATH_SPECIAL.test(value)) bad(`${field} must not contain { } or *`);
  if (value.includes('//')) bad(`${field} must not contain //`);
  return value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value;
}

function certificateFor(
  host: string,
  wanted: string | null | undefined,
  certificates: Map<string, ProxyCertificate>,
  bad: (m: string) => never,
): string {
  if (wanted) {
    const certificate = certificates.get(wanted);
    if (!certificate) return bad(`certificate ${wanted} does not exist`);
    if (!hostCoveredBy(host, certificate.subjectNames)) bad(`certificate ${wanted} does not cover ${host}`);
    return wanted;
  }
  // An exact name before a wildcard, then by id, so the choice is stable.
  const chosen = [...certificates.values()]
    .filter((c) => hostCoveredBy(host, c.subjectNames))
    .sort((a, b) => Number(!exactly(host, a)) - Number(!exactly(host, b)) || compare(a.id, b.id))[0];
  if (!chosen) return bad(`no certificate covers ${host}`);
  return chosen.id;
}

const exactly = (host: string, c: ProxyCertificate) => c.subjectNames.some((n) => n.toLowerCase() === host);

function basicAuth(users: BasicAuthUser[], realm: string, bad: (m: string) => never): CaddyHandler {
  const seen = new Set<string>();
  const accounts = [...users]
    .sort((a, b) => compare(a.username, b.username))
    .map((u) => {
      if (!u.username || u.username.includes(':')) bad(`basic-auth username ${JSON.stringify(u.username)} must be non-empty without ':'`);
      if (seen.has(u.username)) bad(`basic-auth user ${u.username} appears twice`);
      seen.add(u.username);
      if (!BCRYPT.test(u.passwordHash ?? '')) bad(`basic-auth user ${u.username} has no bcrypt hash`);
      return { username: u.username, password: Buffer.from(u.passwordHash, 'utf8').toString('base64') };
    });
  return {
    handler: 'authentication',
    providers: { http_basic: { accounts, hash: { algorithm: 'bcrypt' }, realm } },
  };
}

const middlewareNames = (route: ProxyRoute): string[] => [...(route.forwardAuthEnabled ? [FORWARD_AUTH] : []), ...(route.middlewares ?? [])];

function middlewareHandlers(route: ProxyRoute, shared: Record<string, CaddyHandler[]>, bad: (m: string) => never): CaddyHandler[] {
  const names = middlewareNames(route);
  const seen = new Set<string>();
  const handlers: CaddyHandler[] = [];
  for (const name of names) {
    if (seen.has(name)) bad(`middleware ${name} is named twice`);
    seen.add(name);
    if (!Object.hasOwn(shared, name)) bad(`unknown middleware ${JSON.stringify(name)} (not in the shared middleware configuration)`);
    const list = shared[name]!;
    if (!Array.isArray(list) || !list.every(isCaddyHandler)) {
      bad(`middleware ${name} must be a list of Caddy handlers, each with a "handler" name`);
    }
    for (const h of list) handlers.push(structuredClone(h));
  }
  return handlers;
}

const reverseProxy = (dial: string): CaddyHandler => ({ handler: 'reverse_proxy', upstreams: [{ dial }], ...overTaskSwaps() });

/**
 * Rides over a redeploy's task swap. The upstream is a service's DNS name (dnsrr): each new
 * connection resolves it again, and during a start-first update it names both tasks, then
 * only the new one once the engine takes the old one out (2 s before stopping it). A
 * connection refused (a new task not listening yet, a name not answering for a moment) is
 * tried again every `try_interval` for up to `try_duration`, so clients wait rather than
 * see a 502; `retry_match` also sends a GET or HEAD again when the upstream dropped it
 * after connecting (an old task stopping mid-request). Caddy 2.6 JSON:
 * `load_balancing.try_duration`, `try_interval`, `retry_match` (request matcher sets).
 */
function overTaskSwaps(): { load_balancing: Record<string, unknown> } {
  return { load_balancing: { try_duration: '10s', try_interval: '250ms', retry_match: [{ method: ['GET', 'HEAD'] }] } };
}

const redirect = (httpsPort: number): CaddyHandler => ({
  handler: 'static_response',
  status_code: 308,
  headers: { Location: [`https://{http.request.host}${httpsPort === 443 ? '' : `:${httpsPort}`}{http.request.uri}`] },
});


/** Two routes on one host + path, the platform's host, or one host with two certificates. */
function checkConflicts(entries: Entry[], issuers: Map<string, IssuerOption>): void {
  const byRoute = new Map<string, Entry>();
  const byHost = new Map<string, Entry>();
  for (const e of entries) {
    const key = `${e.entrypoint ?? ''} ${e.host} ${e.path}`;
    const other = byRoute.get(key);
    if (other) fail(`${e.label}: ${e.host}${e.path === '/' ? '' : e.path} is already routed by ${other.label}`);
    byRoute.set(key, e);
    if (e.tls?.kind === 'issuer' && e.host.startsWith('*.') && issuers.get(e.tls.key)!.module === 'acme') {
      fail(`${e.label}: a wildcard host needs the ACME DNS challenge, which this proxy does not do; use a custom certificate`);
    }
    if (!e.tls) continue;
    const first = byHost.get(e.host);
    if (first && (first.tls!.kind !== e.tls.kind || tlsKey(first.tls!) !== tlsKey(e.tls))) {
      fail(`${e.label}: ${e.host} gets its certificate differently from ${first.label}`);
    }
    if (!first) byHost.set(e.host, e);
  }
  const platform = entries.find((e) => e.label.startsWith('platform'));
  const clash = platform && entries.find((e) => e !== platform && e.host === platform.host);
  if (clash) fail(`${clash.label}: ${platform!.host} is the platform's own domain`);
}

const tlsKey = (t: Tls) => (t.kind === 'custom' ? `custom:${t.certificateId}` : t.key);
