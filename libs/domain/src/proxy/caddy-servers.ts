/**
 * The servers and the TLS app of a server's Caddy config, built from its checked routes
 * (caddy-config.ts checks the input and makes the entries). Pure.
 */
import type { CaddyHandler, IssuerOption, ProxyCertificate } from './caddy-input.js';

export type Json = Record<string, unknown>;

/** How an HTTPS host gets its certificate. */
export type Tls = { kind: 'issuer'; key: string } | { kind: 'custom'; certificateId: string };

/** One route after checking: what the servers are built from. */
export interface Entry {
  label: string;
  host: string;
  path: string;
  https: boolean;
  tls: Tls | null;
  entrypoint: string | null;
  handlers: CaddyHandler[];
}

const notFound = (): CaddyHandler => ({ handler: 'static_response', status_code: 404 });

/**
 * Routes of one server. A host's paths make a subroute (longest path first; 404 unless `/` is
 * routed). Caddy tries routes one by one, so hosts whose subroutes are identical share one
 * terminal route listing them all in its host matcher (an exact host in a list of more than
 * 100 is found by binary search). When more than FANOUT such routes remain, they are nested:
 * FANOUT routes each matching the hosts of a slice of them, with that slice as a subroute,
 * and so on, so a request tries about FANOUT routes per level instead of one per domain.
 * Exact-host routes come before wildcard ones (a request for a.example.com matches both; two
 * exact hosts, or two `*.` wildcards, never match one request), then 404.
 */
export function serverRoutes(entries: Entry[], handle: (e: Entry) => CaddyHandler[]): Json[] {
  const hosts = new Map<string, Entry[]>();
  for (const e of entries) hosts.set(e.host, [...(hosts.get(e.host) ?? []), e]);
  const groups = new Map<string, { hosts: string[]; routes: Json[] }>();
  for (const host of [...hosts.keys()].sort(hostOrder)) {
    const routes = pathRoutes(hosts.get(host)!, handle);
    const key = `${isWildcard(host)} ${JSON.stringify(routes)}`;
    const group = groups.get(key);
    if (group) group.hosts.push(host);
    else groups.set(key, { hosts: [host], routes });
  }
  const all = [...groups.values()];
  const exact = all.filter((g) => !isWildcard(g.hosts[0]!));
  const wildcard = all.filter((g) => isWildcard(g.hosts[0]!));
  const routes = [...nested(exact), ...wildcard].map((g) => hostRoute(g.hosts, g.routes));
  routes.push({ handle: [notFound()], terminal: true });
  return routes;
}

/** Routes per level of the nesting: a request tries at most this many before going down one. */
export const FANOUT = 8;

type HostRoutes = { hosts: string[]; routes: Json[] };

function nested(groups: HostRoutes[]): HostRoutes[] {
  if (groups.length <= FANOUT) return groups;
  const size = Math.ceil(groups.length / FANOUT);
  const slices: HostRoutes[] = [];
  for (let i = 0; i < groups.length; i += size) {
    const slice = groups.slice(i, i + size);
    if (slice.length === 1) {
      slices.push(slice[0]!);
      continue;
    }
    const hosts = slice.flatMap((g) => g.hosts).sort(compare);
    slices.push({ hosts, routes: nested(slice).map((g) => hostRoute(g.hosts, g.routes)) });
  }
  return slices;
}

const hostRoute = (hosts: string[], routes: Json[]): Json => ({
  match: [{ host: hosts }],
  handle: [{ handler: 'subroute', routes }],
  terminal: true,
});

function pathRoutes(entries: Entry[], handle: (e: Entry) => CaddyHandler[]): Json[] {
  const paths = entries.sort((a, b) => b.path.length - a.path.length || compare(a.path, b.path));
  const routes: Json[] = paths.map((e) => {
    const route: Json = {};
    if (e.path !== '/') route.match = [{ path: [e.path, `${e.path}/*`] }];
    route.handle = handle(e);
    return route;
  });
  if (paths[paths.length - 1]!.path !== '/') routes.push({ handle: [notFound()] });
  return routes;
}

const isWildcard = (host: string) => host.startsWith('*.');

/** Exact hosts before wildcards (a request for a.example.com matches both), then by name. */
const hostOrder = (a: string, b: string) => Number(isWildcard(a)) - Number(isWildcard(b)) || compare(a, b);

export function tlsServer(listenPort: number, entries: Entry[]): Json {
  const custom = new Map<string, Set<string>>();
  for (const e of entries) {
    if (e.tls?.kind !== 'custom') continue;
    custom.set(e.tls.certificateId, (custom.get(e.tls.certificateId) ?? new Set()).add(e.host));
  }
  const automatic: Json = { disable_redirects: true };
  const skipped = [...new Set([...custom.values()].flatMap((hosts) => [...hosts]))].sort(compare);
  if (skipped.length > 0) automatic.skip_certificates = skipped;
  const server: Json = {
    listen: [`:${listenPort}`],
    routes: serverRoutes(entries, (e) => e.handlers),
    automatic_https: automatic,
  };
  if (custom.size > 0) {
    server.tls_connection_policies = [
      ...[...custom.keys()].sort(compare).map((id) => ({
        match: { sni: [...custom.get(id)!].sort(compare) },
        certificate_selection: { any_tag: [certificateTag(id)] },
      })),
      {},
    ];
  }
  return server;
}

const certificateTag = (id: string) => `skiff-certificate-${id}`;

export function tlsApp(entries: Entry[], certificates: Map<string, ProxyCertificate>, issuers: Map<string, IssuerOption>): Json | null {
  const loaded = new Set<string>();
  const subjects = new Map<string, Set<string>>();
  for (const e of entries) {
    if (e.tls?.kind === 'custom') loaded.add(e.tls.certificateId);
    if (e.tls?.kind === 'issuer') subjects.set(e.tls.key, (subjects.get(e.tls.key) ?? new Set()).add(e.host));
  }
  const tls: Json = {};
  if (loaded.size > 0) {
    tls.certificates = {
      load_pem: [...loaded].sort(compare).map((id) => {
        const c = certificates.get(id)!;
        return { certificate: c.certificateChain, key: c.privateKey, tags: [certificateTag(id)] };
      }),
    };
  }
  if (subjects.size > 0) {
    tls.automation = {
      policies: [...subjects.keys()].sort(compare).map((key) => ({
        subjects: [...subjects.get(key)!].sort(compare),
        issuers: [issuerJson(issuers.get(key)!)],
      })),
    };
  }
  return Object.keys(tls).length > 0 ? tls : null;
}

function issuerJson(issuer: IssuerOption): Json {
  if (issuer.module === 'internal') return { module: 'internal' };
  const json: Json = { module: 'acme' };
  if (issuer.ca) json.ca = issuer.ca;
  if (issuer.email) json.email = issuer.email;
  return json;
}

export const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
export const sorted = <T>(pairs: [string, T][]) => pairs.sort(([a], [b]) => compare(a, b));
