/**
 * Golden tests of the Caddy config renderer.
 *
 * Each case's whole config is compared with a JSON file under
 * libs/domain/src/golden/caddy-config/ (caddy-config.int.test.ts has Caddy validate them).
 * After an intended change, regenerate them with
 *
 *   UPDATE_GOLDEN=1 npx vitest run libs/domain/src/proxy/caddy-config.spec.ts
 *
 * and review the diff. Without UPDATE_GOLDEN a missing or different golden file fails.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CaddyConfigError, caddyConfig, mergeGlobalOptions } from './caddy-config.js';
import type { ProxyRoute, ServerProxyInput } from './caddy-input.js';
import { FANOUT, MAP_HOSTS } from './caddy-servers.js';
import { ALICE, BOB, TEST_CERTIFICATE } from './test-fixtures.js';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden', 'caddy-config');

function expectGolden(name: string, actual: unknown): void {
  const file = join(GOLDEN_DIR, `${name}.json`);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(file, text);
  }
  if (!existsSync(file)) throw new Error(`missing golden file ${file}; run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toStrictEqual(JSON.parse(readFileSync(file, 'utf8')));
}

let seq = 0;
function route(overrides: Partial<ProxyRoute> = {}): ProxyRoute {
  seq += 1;
  return {
    domainId: `dom_${seq}`,
    host: 'shop.example.com',
    path: '/',
    port: 3000,
    https: false,
    certificateType: 'none',
    customCertResolver: null,
    customEntrypoint: null,
    internalPath: '/',
    stripPath: false,
    middlewares: null,
    enabled: true,
    upstream: 'shop-web-a1b2c3',
    basicAuth: [],
    ...overrides,
  };
}

function input(overrides: Partial<ServerProxyInput> = {}, options: Partial<ServerProxyInput['options']> = {}): ServerProxyInput {
  return {
    routes: [],
    certificates: [],
    platform: null,
    middlewares: {},
    ...overrides,
    options: { adminSocket: '/run/skiff-proxy/admin.sock', ...overrides.options, ...options },
  };
}

const acme = { https: true, certificateType: 'acme' as const };

describe('caddyConfig golden files', () => {
  it('one plain HTTP domain', () => {
    expectGolden('http-only', caddyConfig(input({ routes: [route()] })));
  });

  it('HTTPS with ACME (an email, a staging CA) and the redirect from HTTP', () => {
    const config = caddyConfig(
      input({ routes: [route(acme)] }, { acmeEmail: 'ops@example.com', issuer: { module: 'acme', ca: 'https://acme-staging-v02.api.letsencrypt.org/directory' } }),
    );
    expectGolden('https-acme', config);
  });

  it('HTTPS with the internal issuer on test ports, redirecting to the public port', () => {
    const config = caddyConfig(
      input({ routes: [route(acme)] }, { issuer: { module: 'internal' }, httpPort: 8080, httpsPort: 8443, redirectHttpsPort: 18443 }),
    );
    expectGolden('https-internal-test-ports', config);
  });

  it('HTTPS with a custom certificate, chosen by the names it covers', () => {
    const config = caddyConfig(
      input({
        routes: [
          route({ host: 'secure.example.com', https: true, certificateType: 'custom' }),
          route({ host: 'api.example.org', https: true, certificateType: 'custom', upstream: 'api-d4e5f6', port: 8080 }),
        ],
        certificates: [TEST_CERTIFICATE],
      }),
    );
    expectGolden('https-custom-certificate', config);
  });

  it('path routing with stripPath and internalPath', () => {
    const config = caddyConfig(
      input({
        routes: [
          route({ path: '/api/', stripPath: true, upstream: 'api-d4e5f6', port: 8080 }),
          route({ path: '/docs', internalPath: '/v2/docs/', upstream: 'docs-0a1b2c', port: 80 }),
          route({ path: '/legacy', stripPath: true, internalPath: '/old', upstream: 'legacy-3c4d5e', port: 9000 }),
        ],
      }),
    );
    expectGolden('paths-strip-internal', config);
  });

  it('basic auth with the bcrypt hashes of the application', () => {
    const config = caddyConfig(input({ routes: [route({ ...acme, basicAuth: [BOB, ALICE] })] }, { basicAuthRealm: 'shop' }));
    expectGolden('basic-auth', config);
  });

  it('several domains on one host with different paths, a wildcard, and a disabled domain', () => {
    const config = caddyConfig(
      input(
        {
          routes: [
            route({ ...acme, path: '/', upstream: 'front-111111' }),
            route({ ...acme, path: '/api', upstream: 'api-222222', port: 8080 }),
            route({ ...acme, path: '/api/v2', upstream: 'api2-333333', port: 8080 }),
            route({ path: '/status', upstream: 'status-444444' }),
            route({ ...acme, host: '*.apps.example.com', upstream: 'tenant-555555' }),
            route({ host: 'blog.example.com', upstream: 'blog-666666' }),
            route({ host: 'disabled.example.com', enabled: false, upstream: 'gone-777777' }),
            route({ ...acme, host: 'shop.example.com', path: '/admin', enabled: false, upstream: 'gone-888888' }),
          ],
        },
        { issuer: { module: 'internal' } },
      ),
    );
    expectGolden('one-host-many-paths', config);
  });

  it('the platform domain beside an application domain', () => {
    const config = caddyConfig(
      input(
        {
          routes: [route()],
          platform: { host: 'skiff.example.com', upstream: 'skiff-control-plane:3000', https: true, certificateType: 'acme' },
        },
        { acmeEmail: 'admin@example.com' },
      ),
    );
    expectGolden('platform-domain', config);
  });

  it('shared middlewares, forward auth, a named resolver, an entrypoint, https without a certificate type, and storage', () => {
    const config = caddyConfig(
      input(
        {
          routes: [
            route({ ...acme, middlewares: ['security-headers', 'compress'], customCertResolver: 'staging', forwardAuthEnabled: true }),
            route({ host: 'metrics.example.com', customEntrypoint: 'metrics', upstream: 'grafana-777777' }),
            route({ host: 'self.example.com', https: true, certificateType: 'none', upstream: 'self-888888' }),
          ],
          middlewares: {
            compress: [{ handler: 'encode', encodings: { gzip: {} } }],
            'security-headers': [{ handler: 'headers', response: { set: { 'X-Frame-Options': ['DENY'] } } }],
            'forward-auth': [{ handler: 'headers', request: { set: { 'X-Forward-Auth': ['checked'] } } }],
          },
        },
        {
          certResolvers: { staging: { module: 'acme', ca: 'https://acme-staging-v02.api.letsencrypt.org/directory', email: 'ops@example.com' } },
          entrypoints: { metrics: 9100 },
          storageRoot: '/data/caddy',
        },
      ),
    );
    expectGolden('middlewares-resolver-entrypoint', config);
  });

  it('middlewares no domain names, and standby handlers, in a route that never matches', () => {
    const config = caddyConfig(
      input({
        routes: [route({ middlewares: ['used'] }), route({ host: 'off.example.com', enabled: false, middlewares: ['unused'] })],
        middlewares: {
          used: [{ handler: 'headers', response: { set: { 'X-Used': ['1'] } } }],
          unused: [{ handler: 'encode', encodings: { gzip: {} } }],
        },
        standbyHandlers: [{ handler: 'headers', response: { set: { 'X-Frame-Options': ['DENY'] } } }],
      }),
    );
    expectGolden('standby-handlers', config);
    type Route = { match?: unknown[]; handle: { handler: string }[] };
    const routes = (config.apps as { http: { servers: { http: { routes: Route[] } } } }).http.servers.http.routes;
    expect(routes.at(-1)).toEqual({
      match: [{ expression: 'false' }],
      handle: [
        { handler: 'encode', encodings: { gzip: {} } },
        { handler: 'headers', response: { set: { 'X-Frame-Options': ['DENY'] } } },
      ],
    });
    expect(JSON.stringify(routes.at(-1))).not.toContain('X-Used');
  });

  it('more handler chains than fit one level, nested', () => {
    const routes = Array.from({ length: FANOUT + 4 }, (_, i) => route({ host: `app-${i}.example.com`, path: `/app-${i}` }));
    routes.push(route({ host: '*.apps.example.com', upstream: 'tenant-555555' }));
    expectGolden('nested-hosts', caddyConfig(input({ routes })));
  });

  it('hosts differing only in upstream, port and internalPath: one route, a map setting those per host', () => {
    const routes = [
      route({ host: 'a.example.com', internalPath: '/a' }),
      route({ host: 'b.example.com', upstream: 'other-d4e5f6', port: 8080, internalPath: '/b/' }),
      route({ host: 'c.example.com', path: '/api', stripPath: true, upstream: 'api-111111' }),
      route({ host: 'c.example.com', upstream: 'front-222222' }),
      route({ host: 'd.example.com', path: '/api', stripPath: true, upstream: 'api-333333' }),
      route({ host: 'd.example.com', upstream: 'front-444444' }),
    ];
    expectGolden('mapped-hosts', caddyConfig(input({ routes })));
  });

  it('no domains at all', () => {
    expectGolden('empty', caddyConfig(input()));
  });

  it('the platform domain with its own handlers, and the dashboard', () => {
    const config = caddyConfig(
      input(
        {
          routes: [route()],
          platform: {
            host: 'skiff.example.com',
            upstream: 'host.docker.internal:3000',
            https: true,
            certificateType: 'none',
            handlers: [
              { handler: 'headers', response: { set: { 'X-Frame-Options': ['DENY'] } } },
              { handler: 'encode', encodings: { gzip: {} } },
            ],
          },
        },
        { dashboard: { port: 2020 } },
      ),
    );
    expectGolden('platform-handlers-dashboard', config);
  });

  it('global options merged over a rendered config', () => {
    const global = {
      logging: { logs: { default: { level: 'WARN' } } },
      apps: { http: { grace_period: '5s', servers: { http: { listen: [':8080'] } } } },
      storage: { module: 'file_system', root: '/data/other' },
    };
    const config = caddyConfig(input({ routes: [route()] }, { storageRoot: '/data/caddy' }));
    expectGolden('global-options', mergeGlobalOptions(config, global));
  });
});

describe('the dashboard server', () => {
  type Servers = Record<string, { listen: string[]; routes: unknown[]; automatic_https: unknown }>;
  const servers = (config: Record<string, unknown>) => (config.apps as { http: { servers: Servers } }).http.servers;

  it('listens on its port with the metrics handler at /metrics, 404 elsewhere, without automatic HTTPS', () => {
    const dashboard = servers(caddyConfig(input({}, { dashboard: { port: 2020 } }))).skiff_dashboard!;
    expect(dashboard).toStrictEqual({
      listen: [':2020'],
      routes: [
        { match: [{ path: ['/metrics'] }], handle: [{ handler: 'metrics' }], terminal: true },
        { handle: [{ handler: 'static_response', status_code: 404 }], terminal: true },
      ],
      automatic_https: { disable: true },
    });
  });

  it('is absent without the option (or with null)', () => {
    expect(servers(caddyConfig(input())).skiff_dashboard).toBeUndefined();
    expect(servers(caddyConfig(input({}, { dashboard: null }))).skiff_dashboard).toBeUndefined();
  });

  it('refuses a port another listener uses, or no port', () => {
    expect(() => caddyConfig(input({}, { dashboard: { port: 80 } }))).toThrow(/options\.dashboard\.port must differ/);
    expect(() => caddyConfig(input({}, { dashboard: { port: 0 } }))).toThrow(/options\.dashboard\.port must be a port/);
    expect(() => caddyConfig(input({}, { dashboard: { port: 9100 }, entrypoints: { metrics: 9100 } }))).toThrow(/entrypoint metrics: port 9100 is already used/);
  });
});

/** What every reverse_proxy carries to ride over a redeploy's task swap (overTaskSwaps). */
const OVER_SWAPS = { try_duration: '10s', try_interval: '250ms', retry_match: [{ method: ['GET', 'HEAD'] }] };

describe('reverse proxy to a workload', () => {
  it("retries a refused connection for up to 10 s, and a GET or HEAD the upstream dropped, so a redeploy's swap shows no error", () => {
    const config = caddyConfig(input({ routes: [route()] }));
    const handlers = findHandlers(config, 'reverse_proxy');
    expect(handlers).toHaveLength(1);
    expect(handlers[0]).toMatchObject({ upstreams: [{ dial: expect.any(String) }], load_balancing: OVER_SWAPS });
  });
});

/** Every handler object named `name` anywhere in a config. */
function findHandlers(value: unknown, name: string): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap((v) => findHandlers(v, name));
  if (typeof value !== 'object' || value === null) return [];
  const own = (value as { handler?: unknown }).handler === name ? [value as Record<string, unknown>] : [];
  return [...own, ...Object.values(value).flatMap((v) => findHandlers(v, name))];
}

describe('platform handlers', () => {
  const platform = { host: 'skiff.example.com', upstream: 'skiff:3000', https: false, certificateType: 'none' as const };
  type Handle = { handle: { routes: { handle: unknown[] }[] }[] };
  const platformHandlers = (config: Record<string, unknown>) =>
    (config.apps as { http: { servers: { http: { routes: Handle[] } } } }).http.servers.http.routes[0]!.handle[0]!.routes[0]!.handle;

  it('run in order before the reverse proxy, copied', () => {
    const own = { handler: 'headers', response: { set: { A: ['1'] } } };
    const handlers = platformHandlers(caddyConfig(input({ platform: { ...platform, handlers: [own, { handler: 'encode' }] } })));
    expect(handlers).toStrictEqual([own, { handler: 'encode' }, { handler: 'reverse_proxy', upstreams: [{ dial: 'skiff:3000' }], load_balancing: OVER_SWAPS }]);
    expect(handlers[0]).not.toBe(own);
  });

  it('none: only the reverse proxy', () => {
    expect(platformHandlers(caddyConfig(input({ platform })))).toStrictEqual([{ handler: 'reverse_proxy', upstreams: [{ dial: 'skiff:3000' }], load_balancing: OVER_SWAPS }]);
  });

  it('refuses handlers that are not handler objects', () => {
    expect(() => caddyConfig(input({ platform: { ...platform, handlers: [{ handler: 'encode' }, { nope: 1 } as never] } }))).toThrow(
      /platform domain \(skiff\.example\.com\): handler 2 must be a Caddy handler/,
    );
    expect(() => caddyConfig(input({ platform: { ...platform, handlers: {} as never } }))).toThrow(/handlers must be a list/);
    expect(() => caddyConfig(input({ platform: { ...platform, handlers: [{ handler: '' }] } }))).toThrow(CaddyConfigError);
  });
});

describe('mergeGlobalOptions', () => {
  const base = { admin: { listen: 'unix//a.sock' }, apps: { http: { http_port: 80, servers: { http: { listen: [':80', ':81'], routes: [1] } } } } };

  it('merges objects key by key; arrays and scalars replace', () => {
    const merged = mergeGlobalOptions(base, { apps: { http: { http_port: 8080, servers: { http: { listen: [':9'] }, extra: { listen: [':7'] } } } }, logging: { a: 1 } });
    expect(merged).toStrictEqual({
      admin: { listen: 'unix//a.sock' },
      apps: { http: { http_port: 8080, servers: { http: { listen: [':9'], routes: [1] }, extra: { listen: [':7'] } } } },
      logging: { a: 1 },
    });
  });

  it('an object replaces a scalar or an array and the other way round', () => {
    expect(mergeGlobalOptions({ a: [1], b: 1, c: { d: 1 } }, { a: { x: 1 }, b: { y: 1 }, c: [2] })).toStrictEqual({ a: { x: 1 }, b: { y: 1 }, c: [2] });
  });

  it('an empty object changes nothing', () => {
    expect(mergeGlobalOptions(base, {})).toStrictEqual(base);
  });

  it('shares no objects with either side, and leaves them unchanged', () => {
    const global = { apps: { http: { servers: { extra: { listen: [':7'] } } } } };
    const before = structuredClone(base);
    const merged = mergeGlobalOptions(base, global) as typeof base & typeof global;
    merged.apps.http.servers.http.listen.push(':99');
    merged.apps.http.servers.extra.listen.push(':99');
    expect(base).toStrictEqual(before);
    expect(global.apps.http.servers.extra.listen).toEqual([':7']);
  });

  it('keeps a __proto__ key a plain key', () => {
    const merged = mergeGlobalOptions({}, JSON.parse('{"__proto__": {"polluted": true}, "x": {"__proto__": {"y": 1}}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect((merged as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('refuses an admin key and anything but an object', () => {
    expect(() => mergeGlobalOptions(base, { admin: { listen: ':2019' } })).toThrow(/must not set admin/);
    for (const global of [null, [], 'x', 1]) {
      expect(() => mergeGlobalOptions(base, global)).toThrow(CaddyConfigError);
    }
    expect(() => mergeGlobalOptions(base, [])).toThrow(/must be a JSON object/);
  });
});

describe('caddyConfig behaviour', () => {
  it('is deterministic whatever the order of routes, users and certificates', () => {
    const routes = [
      route({ ...acme, path: '/a', basicAuth: [ALICE, BOB] }),
      route({ ...acme, path: '/a/b' }),
      route({ host: 'x.example.com' }),
      route({ host: 'secure.example.com', https: true, certificateType: 'custom' }),
    ];
    const other = { ...TEST_CERTIFICATE, id: 'crt_0', subjectNames: ['*.example.com'] };
    const forward = caddyConfig(input({ routes, certificates: [TEST_CERTIFICATE, other] }));
    const reversed = routes.map((r) => ({ ...r, basicAuth: [...r.basicAuth].reverse() })).reverse();
    expect(caddyConfig(input({ routes: reversed, certificates: [other, TEST_CERTIFICATE] }))).toStrictEqual(forward);
  });

  it('prefers the certificate naming the host exactly over a wildcard one', () => {
    const wildcard = { ...TEST_CERTIFICATE, id: 'crt_0', subjectNames: ['*.example.com'] };
    const config = caddyConfig(
      input({ routes: [route({ host: 'secure.example.com', https: true, certificateType: 'custom' })], certificates: [wildcard, TEST_CERTIFICATE] }),
    );
    expect(JSON.stringify(config)).toContain('skiff-certificate-crt_1');
    expect(JSON.stringify(config)).not.toContain('skiff-certificate-crt_0');
  });

  it('loads only the certificates in use', () => {
    const unused = { ...TEST_CERTIFICATE, id: 'crt_9', privateKey: 'UNUSED-SECRET' };
    expect(JSON.stringify(caddyConfig(input({ routes: [route()], certificates: [unused] })))).not.toContain('UNUSED-SECRET');
  });

  it('never shares objects with the middleware input', () => {
    const handler = { handler: 'headers', response: { set: { A: ['1'] } } };
    const config = caddyConfig(input({ routes: [route({ middlewares: ['h'] })], middlewares: { h: [handler] } }));
    type Handle = { handle: { routes: { handle: typeof handler[] }[] }[] };
    const servers = (config.apps as { http: { servers: { http: { routes: Handle[] } } } }).http.servers;
    servers.http.routes[0]!.handle[0]!.routes[0]!.handle[0]!.response.set.A.push('2');
    expect(handler.response.set.A).toEqual(['1']);
  });
});

describe('caddyConfig refuses invalid input, naming the domain', () => {
  const refuses = (i: ServerProxyInput, message: RegExp) => expect(() => caddyConfig(i)).toThrow(message);

  it('two routes with the same host and path (a trailing slash makes no difference)', () => {
    const a = route({ domainId: 'dom_a', path: '/api' });
    const b = route({ domainId: 'dom_b', path: '/api/' });
    refuses(input({ routes: [a, b] }), /domain dom_b \(shop\.example\.com\/api\/\): shop\.example\.com\/api is already routed by domain dom_a/);
    expect(() => caddyConfig(input({ routes: [a, { ...b, enabled: false }] }))).not.toThrow();
  });

  it('a custom certificate that does not exist or does not cover the host', () => {
    const custom = route({ domainId: 'dom_c', host: 'secure.example.com', https: true, certificateType: 'custom', certificateId: 'crt_404' });
    refuses(input({ routes: [custom], certificates: [TEST_CERTIFICATE] }), /domain dom_c .*certificate crt_404 does not exist/);
    refuses(input({ routes: [{ ...custom, certificateId: null }] }), /domain dom_c .*no certificate covers secure\.example\.com/);
    refuses(
      input({ routes: [{ ...custom, host: 'other.example.com', certificateId: 'crt_1' }], certificates: [TEST_CERTIFICATE] }),
      /certificate crt_1 does not cover other\.example\.com/,
    );
  });

  it('unknown or repeated middlewares, and middlewares that are not handlers', () => {
    refuses(input({ routes: [route({ domainId: 'dom_m', middlewares: ['nope'] })] }), /domain dom_m .*unknown middleware "nope"/);
    refuses(input({ routes: [route({ domainId: 'dom_f', forwardAuthEnabled: true })] }), /domain dom_f .*unknown middleware "forward-auth"/);
    const shared = { h: [{ handler: 'headers' }] };
    refuses(input({ routes: [route({ middlewares: ['h', 'h'] })], middlewares: shared }), /middleware h is named twice/);
    refuses(input({ routes: [route({ middlewares: ['h'] })], middlewares: { h: [{} as never] } }), /middleware h must be a list of Caddy handlers/);
    refuses(input({ routes: [route({ middlewares: ['toString'] })] }), /unknown middleware "toString"/);
  });

  it('an unknown resolver or entrypoint', () => {
    refuses(input({ routes: [route({ domainId: 'dom_r', ...acme, customCertResolver: 'dns' })] }), /domain dom_r .*unknown certificate resolver "dns"/);
    refuses(input({ routes: [route({ domainId: 'dom_e', customEntrypoint: 'web2' })] }), /domain dom_e .*unknown entrypoint "web2"/);
  });

  it('an entrypoint mixing HTTPS and HTTP, or reusing a port', () => {
    const options = { entrypoints: { alt: 9000 } };
    refuses(
      input({ routes: [route({ customEntrypoint: 'alt' }), route({ host: 'b.example.com', ...acme, customEntrypoint: 'alt' })] }, options),
      /entrypoint alt cannot serve HTTPS and plain HTTP routes together/,
    );
    refuses(input({}, { entrypoints: { alt: 443 } }), /entrypoint alt: port 443 is already used/);
  });

  it('paths and hosts Caddy would misread', () => {
    refuses(input({ routes: [route({ domainId: 'dom_p', path: '/{http.request.host}' })] }), /domain dom_p .*path must not contain \{ \} or \*/);
    refuses(input({ routes: [route({ internalPath: '/a/*' })] }), /internalPath must not contain/);
    refuses(input({ routes: [route({ path: 'api' })] }), /path must start with \//);
    refuses(input({ routes: [route({ domainId: 'dom_h', host: 'https://x.example.com' })] }), /domain dom_h .*host must be a host name without a scheme/);
    refuses(input({ routes: [route({ upstream: 'bad name' })] }), /upstream "bad name" is not a service name/);
    refuses(input({ routes: [route({ port: 70000 })] }), /port must be 1-65535/);
  });

  it('one host with two ways of getting its certificate', () => {
    refuses(
      input({
        routes: [
          route({ domainId: 'dom_1', ...acme }),
          route({ domainId: 'dom_2', path: '/x', https: true, certificateType: 'custom' }),
        ],
        certificates: [{ ...TEST_CERTIFICATE, subjectNames: ['shop.example.com'] }],
      }),
      /domain dom_2 .*shop\.example\.com gets its certificate differently from domain dom_1/,
    );
  });

  it('a wildcard host with the ACME issuer (it needs the DNS challenge)', () => {
    refuses(input({ routes: [route({ domainId: 'dom_w', host: '*.example.com', ...acme })] }), /domain dom_w .*wildcard host needs the ACME DNS challenge/);
  });

  it('bad basic-auth users, without showing the hash', () => {
    refuses(input({ routes: [route({ domainId: 'dom_b', basicAuth: [ALICE, ALICE] })] }), /domain dom_b .*user alice appears twice/);
    const plain = { username: 'carol', passwordHash: 'plain-text-secret' };
    expect(() => caddyConfig(input({ routes: [route({ basicAuth: [plain] })] }))).toThrow(/user carol has no bcrypt hash/);
    expect(() => caddyConfig(input({ routes: [route({ basicAuth: [plain] })] }))).not.toThrow(/plain-text-secret/);
    refuses(input({ routes: [route({ basicAuth: [{ ...ALICE, username: 'a:b' }] })] }), /without ':'/);
  });

  it('a route on the platform domain, and a bad platform upstream', () => {
    const platform = { host: 'skiff.example.com', upstream: 'skiff:3000', https: false, certificateType: 'none' as const };
    refuses(input({ routes: [route({ domainId: 'dom_s', host: 'skiff.example.com', path: '/x' })], platform }), /domain dom_s .*skiff\.example\.com is the platform's own domain/);
    refuses(input({ platform: { ...platform, upstream: 'http://skiff:3000' } }), /platform domain \(skiff\.example\.com\): upstream .* is not host:port/);
  });

  it('an admin listener that is not a unix socket path, and bad ports', () => {
    refuses(input({}, { adminSocket: 'localhost:2019' }), /options\.adminSocket must be an absolute unix socket path/);
    refuses(input({}, { adminSocket: '/run/a b.sock' }), /options\.adminSocket/);
    refuses(input({}, { httpPort: 443 }), /must differ/);
    refuses(input({}, { httpsPort: 0 }), /options\.httpsPort must be a port/);
  });

  it('throws CaddyConfigError', () => {
    expect(() => caddyConfig(input({}, { adminSocket: '' }))).toThrow(CaddyConfigError);
  });
});

describe('hosts sharing a handler chain share one route', () => {
  const overTaskSwapsOptions = { load_balancing: { try_duration: '10s', try_interval: '250ms', retry_match: [{ method: ['GET', 'HEAD'] }] } };
  type Route = { match?: { host?: string[]; path?: string[] }[]; handle: { handler: string; routes?: Route[] }[]; terminal?: boolean };
  const allRoutes = (config: Record<string, unknown>, name: string) =>
    (config.apps as { http: { servers: Record<string, { routes: Route[] }> } }).http.servers[name]!.routes;
  const lowercasesHost = (r: Route | undefined) => JSON.stringify(r?.match?.[0]).includes('header_regexp');
  /** The host routes, after the route lowercasing the request's host where there is one. */
  const serverOf = (config: Record<string, unknown>, name: string) => allRoutes(config, name).filter((r, i) => i > 0 || !lowercasesHost(r));
  const hostsOf = (routes: Route[]) => routes.map((r) => r.match?.[0]?.host ?? null);
  const notFound = { handle: [{ handler: 'static_response', status_code: 404 }], terminal: true };

  it("lowercases the request's host first only where a map or a list of more than 100 hosts would take letter case into account", () => {
    const first = (routes: ProxyRoute[]) => lowercasesHost(allRoutes(caddyConfig(input({ routes })), 'http')[0]);
    const many = (n: number, extra: Partial<ProxyRoute> = {}) => Array.from({ length: n }, (_, i) => route({ host: `h-${i}.example.com`, ...extra }));
    expect(first(many(100))).toBe(false);
    expect(first([...many(100), route({ host: '*.example.org' })])).toBe(false);
    expect(first(many(101))).toBe(true);
    expect(first([route({ host: 'a.example.com' }), route({ host: 'b.example.com', upstream: 'other-d4e5f6' })])).toBe(true);
    expect(first(many(101, { https: true, certificateType: 'acme' }))).toBe(true);
  });

  it('puts the hosts of one upstream and chain in one host matcher, whatever their order', () => {
    const routes = ['c.example.com', 'a.example.com', 'b.example.com'].map((host) => route({ host }));
    const http = serverOf(caddyConfig(input({ routes })), 'http');
    expect(http).toStrictEqual([
      {
        match: [{ host: ['a.example.com', 'b.example.com', 'c.example.com'] }],
        handle: [{ handler: 'subroute', routes: [{ handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: 'shop-web-a1b2c3:3000' }], ...overTaskSwapsOptions }] }] }],
        terminal: true,
      },
      notFound,
    ]);
  });

  it('keeps basic auth, middlewares, paths and internalPath (or none) apart; upstreams and ports share a route', () => {
    const routes = [
      route({ host: 'a.example.com' }),
      route({ host: 'b.example.com', upstream: 'other-d4e5f6' }),
      route({ host: 'c.example.com', port: 8080 }),
      route({ host: 'd.example.com', basicAuth: [ALICE] }),
      route({ host: 'e.example.com', middlewares: ['h'] }),
      route({ host: 'f.example.com', path: '/api' }),
      route({ host: 'g.example.com', internalPath: '/v2' }),
      route({ host: 'h.example.com' }),
      route({ host: 'i.example.com', basicAuth: [ALICE] }),
    ];
    const http = serverOf(caddyConfig(input({ routes, middlewares: { h: [{ handler: 'headers' }] } })), 'http');
    expect(hostsOf(http)).toEqual([
      ['a.example.com', 'b.example.com', 'c.example.com', 'h.example.com'],
      ['d.example.com', 'i.example.com'],
      ['e.example.com'],
      ['f.example.com'],
      ['g.example.com'],
      null,
    ]);
  });

  it('groups hosts with the same paths, keeping the longest path first and 404 without /', () => {
    const paths = (host: string) => [
      route({ host, path: '/api', upstream: 'api-222222' }),
      route({ host, path: '/', upstream: 'front-111111' }),
      route({ host, path: '/api/v2', upstream: 'api2-333333' }),
    ];
    const routes = [
      ...paths('y.example.com'),
      ...paths('x.example.com'),
      route({ host: 'z.example.com', path: '/api', upstream: 'api-222222' }),
      route({ host: 'w.example.com', path: '/api', upstream: 'api-222222' }),
    ];
    const http = serverOf(caddyConfig(input({ routes })), 'http');
    expect(hostsOf(http)).toEqual([['w.example.com', 'z.example.com'], ['x.example.com', 'y.example.com'], null]);
    const dial = (r: Route) => (r.handle[0] as unknown as { upstreams?: { dial: string }[]; status_code?: number }).upstreams?.[0]?.dial ?? 404;
    const inner = (r: Route) => r.handle[0]!.routes!.map((p) => [p.match?.[0]?.path?.[0] ?? '/', dial(p)]);
    expect(inner(http[0]!)).toEqual([['/api', 'api-222222:3000'], ['/', 404]]);
    expect(inner(http[1]!)).toEqual([['/api/v2', 'api2-333333:3000'], ['/api', 'api-222222:3000'], ['/', 'front-111111:3000']]);
  });

  it('puts exact hosts before wildcards, even with the same chain', () => {
    const routes = [route({ host: '*.apps.example.com' }), route({ host: 'zz.apps.example.com' }), route({ host: '*.example.org' }), route({ host: 'a.example.com' })];
    expect(hostsOf(serverOf(caddyConfig(input({ routes })), 'http'))).toEqual([
      ['a.example.com', 'zz.apps.example.com'],
      ['*.apps.example.com', '*.example.org'],
      null,
    ]);
  });

  it('groups the redirects of HTTPS hosts on the HTTP server and their routes by chain on the HTTPS server', () => {
    const routes = [
      route({ host: 'a.example.com', ...acme }),
      route({ host: 'b.example.com', ...acme, upstream: 'other-d4e5f6' }),
      route({ host: 'c.example.com' }),
    ];
    const config = caddyConfig(input({ routes }, { issuer: { module: 'internal' } }));
    const http = serverOf(config, 'http');
    expect(hostsOf(http)).toEqual([['a.example.com', 'b.example.com'], ['c.example.com'], null]);
    expect(http[0]!.handle[0]!.routes![0]!.handle[0]!.handler).toBe('static_response');
    expect(hostsOf(serverOf(config, 'https'))).toEqual([['a.example.com', 'b.example.com'], null]);
  });

  it('keeps 1000 domains of a few chains to a few routes', () => {
    const routes = Array.from({ length: 1000 }, (_, i) =>
      route({ host: `site-${i}.example.com`, path: i % 5 === 1 ? '/api' : '/', stripPath: i % 5 === 1, basicAuth: i % 10 === 3 ? [ALICE, BOB] : [] }),
    );
    const http = serverOf(caddyConfig(input({ routes })), 'http');
    expect(http).toHaveLength(4);
    expect(hostsOf(http).slice(0, 3).map((h) => h!.length).sort((a, b) => a - b)).toEqual([100, 200, 700]);
  });
});

describe('many handler chains are nested', () => {
  type Handler = {
    handler: string;
    routes?: Route[];
    upstreams?: { dial: string }[];
    status_code?: number;
    destinations?: string[];
    mappings?: { input: string; outputs: string[] }[];
    defaults?: string[];
    request?: { replace?: Record<string, { search: string; replace: string }[]> };
  };
  type Route = {
    match?: { host?: string[]; path?: string[]; vars?: Record<string, string[]>; header_regexp?: Record<string, { pattern: string }> }[];
    handle: Handler[];
  };
  const httpRoutes = (config: Record<string, unknown>) => (config.apps as { http: { servers: { http: { routes: Route[] } } } }).http.servers.http.routes;
  const wildcardMatches = (pattern: string, host: string) => host.endsWith(pattern.slice(1)) && !host.slice(0, -pattern.length + 1).includes('.');
  /** Caddy 2.6's host matcher: a wildcard in any letter case; an exact host in any case too, unless the list has more than 100 (binary search, case counts). */
  const hostMatches = (patterns: string[], host: string) =>
    patterns.some((p) =>
      p.startsWith('*.') ? wildcardMatches(p, host.toLowerCase()) : patterns.length > 100 ? p === host : p === host.toLowerCase(),
    );

  /** What Caddy does with a request for `/` on `host`: the first route that matches, down through subroutes; and how many routes it tried. */
  function serve(routes: Route[], requested: string, values = new Map<string, string>()): { answer: string | number; tried: number; mapped: number } {
    let tried = 0;
    let mapped = 0;
    let host = requested;
    const fill = (text: string) => text.replace(/\{skiff\.[^}]+\}/g, (name) => values.get(name) ?? '');
    for (const r of routes) {
      tried += 1;
      const m = r.match?.[0];
      if (m?.path || (m?.host && !hostMatches(m.host, host))) continue;
      if (m?.vars && !Object.entries(m.vars).some(([k, v]) => v.includes(fill(k)))) continue;
      if (m?.header_regexp && !Object.entries(m.header_regexp).every(([k, v]) => k === 'Host' && new RegExp(v.pattern).test(host))) continue;
      for (const h of r.handle) {
        if (h.handler === 'headers') {
          for (const op of h.request?.replace?.Host ?? []) host = host.replaceAll(op.search, op.replace);
          continue;
        }
        if (h.handler === 'map') {
          const found = h.mappings!.find((x) => x.input === host);
          h.destinations!.forEach((d, i) => values.set(d, found ? found.outputs[i]! : h.defaults![i]!));
          mapped = Math.max(mapped, h.mappings!.length);
          continue;
        }
        if (h.handler !== 'subroute' && h.handler !== 'reverse_proxy' && h.handler !== 'static_response') continue;
        if (h.handler !== 'subroute') return { answer: h.upstreams ? fill(h.upstreams[0]!.dial) : h.status_code!, tried, mapped };
        const inner = serve(h.routes!, host, values);
        return { answer: inner.answer, tried: tried + inner.tried, mapped: Math.max(mapped, inner.mapped) };
      }
    }
    return { answer: 'nothing', tried, mapped };
  }

  it('routes every host of 1000 to its own upstream, trying a few dozen routes instead of 1000', () => {
    const routes = Array.from({ length: 1000 }, (_, i) => route({ host: `app-${i}.example.com`, upstream: `app-${i}-a1b2c3` }));
    routes.push(route({ host: '*.example.org', upstream: 'tenant-555555' }), route({ host: 'www.example.org', upstream: 'www-666666' }));
    const http = httpRoutes(caddyConfig(input({ routes })));
    expect(http.length).toBeLessThanOrEqual(FANOUT + 3);
    expect(http.slice(1, -2).every((r) => r.match![0]!.host!.length > 100)).toBe(true);
    let most = 0;
    for (let i = 0; i < 1000; i++) {
      const { answer, tried } = serve(http, `app-${i}.example.com`);
      expect(answer).toBe(`app-${i}-a1b2c3:3000`);
      most = Math.max(most, tried);
    }
    expect(most).toBeLessThanOrEqual(4 * FANOUT);
    expect(serve(http, 'www.example.org').answer).toBe('www-666666:3000');
    expect(serve(http, 'other.example.org').answer).toBe('tenant-555555:3000');
    expect(serve(http, 'app-1.example.com.evil.test').answer).toBe(404);
    expect(serve(http, 'unknown.example.com').answer).toBe(404);
  });

  it('1000 hosts with a chain each that differ in upstream and internalPath: a few routes, maps of at most MAP_HOSTS hosts', () => {
    const routes = Array.from({ length: 1000 }, (_, i) =>
      route({ host: `app-${String(i).padStart(4, '0')}.example.com`, upstream: `app-${i}-a1b2c3`, port: 3000 + (i % 7), internalPath: `/d${i}` }),
    );
    routes.push(route({ host: 'zz.example.com', upstream: 'last-777777' }));
    const http = httpRoutes(caddyConfig(input({ routes })));
    expect(http.length).toBeLessThanOrEqual(FANOUT + 3);
    let most = 0;
    for (let i = 0; i < 1000; i++) {
      const { answer, tried, mapped } = serve(http, `app-${String(i).padStart(4, '0')}.example.com`);
      expect(answer).toBe(`app-${i}-a1b2c3:${3000 + (i % 7)}`);
      expect(mapped).toBeLessThanOrEqual(MAP_HOSTS);
      most = Math.max(most, tried);
    }
    expect(most).toBeLessThanOrEqual(FANOUT + 4);
    expect(serve(http, 'zz.example.com')).toMatchObject({ answer: 'last-777777:3000', mapped: 0 });
    expect(serve(http, 'APP-0123.Example.com').answer).toBe(`app-123-a1b2c3:${3000 + (123 % 7)}`);
    expect(serve(http, 'ZZ.example.com').answer).toBe('last-777777:3000');
    const rewrites = findHandlers(http, 'rewrite').map((h) => h.uri);
    expect(new Set(rewrites)).toEqual(new Set(['{skiff.p0.prefix}{http.request.uri.path}']));
  });

  it('routes a mapped host in any letter case to its own upstream; an unknown host 404s', () => {
    const routes = [route({ host: 'a.example.com' }), route({ host: 'b.example.com', upstream: 'other-d4e5f6' })];
    const http = httpRoutes(caddyConfig(input({ routes })));
    expect(serve(http, 'b.example.com').answer).toBe('other-d4e5f6:3000');
    // Caddy's host matcher (of up to 100 hosts) takes B.example.com for b.example.com; the map must too.
    expect(serve(http, 'B.Example.COM')).toMatchObject({ answer: 'other-d4e5f6:3000', mapped: 2 });
    expect(serve(http, 'A.example.com').answer).toBe(`${routes[0]!.upstream}:3000`);
    expect(serve(http, 'C.example.com').answer).toBe(404);
  });

  it('routes hosts of routes listing more than 100, and wildcards, in any letter case', () => {
    const routes = Array.from({ length: 1000 }, (_, i) => route({ host: `app-${i}.example.com`, upstream: `app-${i}-a1b2c3` }));
    routes.push(route({ host: '*.example.org', upstream: 'tenant-555555' }));
    const http = httpRoutes(caddyConfig(input({ routes })));
    expect(serve(http, 'App-512.Example.COM').answer).toBe('app-512-a1b2c3:3000');
    expect(serve(http, 'OTHER.example.ORG').answer).toBe('tenant-555555:3000');
    expect(serve(http, 'App-1000.Example.COM').answer).toBe(404);
    const same = Array.from({ length: 150 }, (_, i) => route({ host: `same-${i}.example.com` }));
    const one = httpRoutes(caddyConfig(input({ routes: same })));
    expect(one[one.length - 2]!.match![0]!.host).toHaveLength(150);
    expect(serve(one, 'SAME-149.example.com').answer).toBe(`${same[0]!.upstream}:3000`);
  });

  it('lists each host once per level, sorted, with no host in two routes of a level', () => {
    const routes = Array.from({ length: 100 }, (_, i) => route({ host: `app-${String(i).padStart(3, '0')}.example.com`, upstream: `app-${i}-a1b2c3` }));
    const check = (level: Route[]) => {
      const hosts = level.flatMap((r) => r.match?.[0]?.host ?? []);
      expect(new Set(hosts).size).toBe(hosts.length);
      for (const r of level) {
        const own = r.match?.[0]?.host;
        if (!own) continue;
        expect(own).toEqual([...own].sort());
        const inner = r.handle.find((h) => h.handler === 'subroute')!.routes!;
        if (inner[0]?.match?.[0]?.host) {
          expect(inner.flatMap((x) => x.match![0]!.host!).sort()).toEqual(own);
          check(inner);
        }
      }
    };
    const http = httpRoutes(caddyConfig(input({ routes })));
    expect(http.flatMap((r) => r.match?.[0]?.host ?? [])).toHaveLength(100);
    check(http);
  });
});
