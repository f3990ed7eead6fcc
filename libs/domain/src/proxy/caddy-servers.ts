/**
 * The servers and the TLS app of a server's Caddy config, built from its checked routes
 * (caddy-config.ts checks the input and makes the entries). Pure.
 */
import type { CaddyHandler, IssuerOption, ProxyCertificate } from './caddy-input.js';

export type Json = Record<string, unknown>;

/** How an HTTPS host gets its certificate. */
export type Tls = { kind: 'issuer'; key: string } | { kind: 'custom'; certificateId: string };

/**
 * A route's handlers with its per-domain values (a dial address, a path prefix) named, so that
 * hosts differing only in those values can share one chain. `build` gets each value either
 * as it is or as a placeholder that a `map` handler fills in per host.
 */
export interface Chain {
  values: Record<string, string>;
  build: (value: (name: string) => string) => CaddyHandler[];
}

/** A chain without per-domain values. */
export const fixedChain = (handlers: CaddyHandler[]): Chain => ({ values: {}, build: () => handlers.map((h) => structuredClone(h)) });

/** One route after checking: what the servers are built from. */
export interface Entry {
  label: string;
  host: string;
  path: string;
  https: boolean;
  tls: Tls | null;
  entrypoint: string | null;
  chain: Chain;
}

const notFound = (): CaddyHandler => ({ handler: 'static_response', status_code: 404 });

/**
 * The first route where a server's host matchers or maps would take letter case into account
 * (a map compares exactly; Caddy 2.6's host matcher finds an exact host among more than 100
 * by binary search, case-sensitively): a request's host with an upper-case letter is
 * lowercased (Caddy has no placeholder for that: one replacement per letter), so the routes
 * after it see the lowercase host they list. A lowercase host only passes its one regexp.
 */
const lowercaseHost = (): Json => ({
  match: [{ header_regexp: { Host: { pattern: '[A-Z]' } } }],
  handle: [
    {
      handler: 'headers',
      request: { replace: { Host: [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'].map((c) => ({ search: c, replace: c.toLowerCase() })) } },
    },
  ],
});

/** Caddy's host matcher compares an exact host in any letter case only in lists of up to this many. */
const CASELESS_HOSTS = 100;

/** Routes per level of the nesting: a request tries at most this many before going down one. */
export const FANOUT = 8;

/**
 * Hosts per `map` handler at most. Caddy 2.6's map compares the host with its inputs one by
 * one for each placeholder it fills, so a chain shared by more hosts is split into routes of
 * this many (each over 100 hosts, where Caddy's host matcher finds an exact host by binary
 * search, until the last).
 */
export const MAP_HOSTS = 128;

/** The placeholder of value `name` of a host's `index`-th path route. */
const placeholder = (index: number, name: string) => `{skiff.p${index}.${name}}`;

type HostRoutes = { hosts: string[]; routes: Json[]; lead?: CaddyHandler[] };

/**
 * Routes of one server. A host's paths make a subroute (longest path first; 404 unless `/` is
 * routed). Caddy tries routes one by one, so hosts whose subroutes are alike share one
 * terminal route listing them all in its host matcher (an exact host in a list of more than
 * 100 is found by binary search). Alike: the same handlers, where the exact hosts of one
 * route may differ in their values (upstream and port, internalPath); then a `map` handler
 * keyed on the request's host sets those values as placeholders before the subroute (at most
 * MAP_HOSTS hosts a route), and a host the map does not know gets 404, never an empty upstream.
 * Hosts are listed in lowercase; where a map or a list of more than 100 would refuse another
 * letter case, a first route lowercases the request's host (lowercaseHost). When more than
 * FANOUT such routes remain, they are nested: FANOUT routes each matching the hosts of a
 * slice of them, with that slice as a subroute, and so on, so a request tries about FANOUT
 * routes per level instead of one per chain. Exact-host routes come before wildcard ones (a request for a.example.com matches
 * both; two exact hosts, or two `*.` wildcards, never match one request), then 404.
 */
export function serverRoutes(entries: Entry[], handle: (e: Entry) => Chain): Json[] {
  const hosts = new Map<string, Entry[]>();
  for (const e of entries) hosts.set(e.host, [...(hosts.get(e.host) ?? []), e]);
  const groups = new Map<string, { hosts: string[]; values: [string, string][][]; literal: Json[]; template: Json[] }>();
  for (const host of [...hosts.keys()].sort(hostOrder)) {
    const paths = byPath(hosts.get(host)!);
    const chains = paths.map(handle);
    const literal = pathRoutes(paths.map((e, i) => [e.path, chains[i]!.build((name) => chains[i]!.values[name]!)]));
    // A wildcard never equals the request's host a map is keyed on: its values stay in its routes.
    const template = isWildcard(host) ? literal : pathRoutes(paths.map((e, i) => [e.path, chains[i]!.build((name) => placeholder(i, name))]));
    const values = chains.flatMap((c, i) => Object.keys(c.values).sort(compare).map((name): [string, string] => [placeholder(i, name), c.values[name]!]));
    const key = `${isWildcard(host)} ${JSON.stringify(template)}`;
    const group = groups.get(key);
    if (group) {
      group.hosts.push(host);
      group.values.push(values);
    } else groups.set(key, { hosts: [host], values: [values], literal, template });
  }
  const all: HostRoutes[] = [];
  for (const g of groups.values()) {
    const same = g.values.every((v) => JSON.stringify(v) === JSON.stringify(g.values[0]));
    if (same) all.push({ hosts: g.hosts, routes: g.literal });
    else all.push(...mapped(g.hosts, g.values, g.template));
  }
  const exact = all.filter((g) => !isWildcard(g.hosts[0]!));
  const wildcard = all.filter((g) => isWildcard(g.hosts[0]!));
  const routes = [...nested(exact), ...wildcard].map(hostRoute);
  routes.push({ handle: [notFound()], terminal: true });
  const caseSensitive = all.some((g) => g.lead) || exact.reduce((n, g) => n + g.hosts.length, 0) > CASELESS_HOSTS;
  return caseSensitive ? [lowercaseHost(), ...routes] : routes;
}

/** Hosts sharing `template`, in routes of at most MAP_HOSTS hosts, each with the map of its hosts' values. */
function mapped(hosts: string[], values: [string, string][][], template: Json[]): HostRoutes[] {
  const count = Math.ceil(hosts.length / MAP_HOSTS);
  const size = Math.ceil(hosts.length / count);
  const result: HostRoutes[] = [];
  for (let i = 0; i < hosts.length; i += size) {
    const own = hosts.slice(i, i + size);
    const destinations = values[i]!.map(([name]) => name);
    const map: CaddyHandler = {
      handler: 'map',
      source: '{http.request.host}',
      destinations,
      mappings: own.map((host, k) => ({ input: host, outputs: values[i + k]!.map(([, value]) => value) })),
      // Every value is non-empty, so an empty one is a host the map does not know.
      defaults: destinations.map(() => ''),
    };
    const unknown: Json = { match: [{ vars: { [destinations[0]!]: [''] } }], handle: [notFound()], terminal: true };
    result.push({ hosts: own, routes: [unknown, ...structuredClone(template)], lead: [map] });
  }
  return result;
}

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
    slices.push({ hosts, routes: nested(slice).map(hostRoute) });
  }
  return slices;
}

const hostRoute = (g: HostRoutes): Json => ({
  match: [{ host: g.hosts }],
  handle: [...(g.lead ?? []), { handler: 'subroute', routes: g.routes }],
  terminal: true,
});

const byPath = (entries: Entry[]) => [...entries].sort((a, b) => b.path.length - a.path.length || compare(a.path, b.path));

/** The routes of one host's paths, longest first. */
function pathRoutes(paths: [string, CaddyHandler[]][]): Json[] {
  const routes: Json[] = paths.map(([path, handlers]) => {
    const route: Json = {};
    if (path !== '/') route.match = [{ path: [path, `${path}/*`] }];
    route.handle = handlers;
    return route;
  });
  if (paths[paths.length - 1]![0] !== '/') routes.push({ handle: [notFound()] });
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
    routes: serverRoutes(entries, (e) => e.chain),
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
