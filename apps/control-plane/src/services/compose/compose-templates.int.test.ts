// Compose templates against real Postgres: the bundled catalog, processTemplate, import,
// deployTemplate, and remote catalogs served by a real HTTP server on loopback.
import { createServer, type Server } from 'node:http';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDotenv as parseDotenvText } from '@skiff/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../config.js';
import { otherOrganization, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { bundledCatalogDir, loadBundledCatalog } from './compose-templates-catalog.js';
import { OPERATOR_CATALOG } from './compose-templates-fetch.js';
import { RemoteCatalog } from './compose-templates-remote.js';

const PUBLIC_IP = '93.184.216.40';
const BUNDLED = ['redis', 'caddy', 'static-page', 'redis-commander', 'uptime-kuma'];

/** The variables of a dotenv text, which must read without issues. */
const parseDotenv = (text: string) => {
  const parsed = parseDotenvText(text);
  expect(parsed.issues).toEqual([]);
  return parsed.variables;
};

const encode = (compose: string, config: string) => Buffer.from(JSON.stringify({ compose, config })).toString('base64');

const WEB_COMPOSE = 'services:\n  web:\n    image: busybox:latest\n  cache:\n    image: redis:8\n';
const HELPERS_TEMPLATE = encode(
  WEB_COMPOSE,
  `[variables]
main_domain = "\${domain}"
db_password = "\${password:16}"

[config.env]
DB_PASSWORD = "\${db_password}"
SECRET = "\${base64:24}"
TOKEN = "\${hash:12}"
INSTANCE = "\${uuid}"
URL = "http://\${main_domain}"
DB_PASSWORD_AGAIN = "\${db_password}"

[[config.domains]]
serviceName = "web"
port = 8080
host = "\${main_domain}"

[[config.domains]]
serviceName = "cache"
port = 6379
path = "/admin"
`,
);

/** A small HTTP server on loopback whose answers the test sets per path. */
async function catalogServer() {
  const routes = new Map<string, (res: import('node:http').ServerResponse) => void>();
  const server: Server = createServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route) route(res);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const text = (body: string, type = 'text/plain') => (res: import('node:http').ServerResponse) => res.writeHead(200, { 'content-type': type }).end(body);
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    routes,
    serve(path: string, body: string) {
      routes.set(path, text(body));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
type CatalogServer = Awaited<ReturnType<typeof catalogServer>>;

const REMOTE_META = [
  { id: 'redis', name: 'Redis (remote)', version: 8.2, description: 'from the remote catalog', tags: ['Database'], logo: 'redis.svg' },
  { id: 'whoami', name: 'Who am I', version: 'v1.10', description: 'echoes requests', tags: ['debug'], links: { github: 'https://github.com/traefik/whoami', bad: 'javascript:alert(1)' } },
  { id: '../escape', name: 'bad id' },
  { id: 'no-name' },
  { id: 'whoami', name: 'listed twice' },
];

function serveRemoteCatalog(server: CatalogServer, prefix: string) {
  server.serve(`${prefix}/meta.json`, JSON.stringify(REMOTE_META));
  server.serve(`${prefix}/blueprints/whoami/docker-compose.yml`, 'services:\n  whoami:\n    image: traefik/whoami:v1.10\n');
  server.serve(`${prefix}/blueprints/whoami/template.toml`, '[variables]\nmain_domain = "${domain}"\n\n[[config.domains]]\nserviceName = "whoami"\nport = 80\nhost = "${main_domain}"\n');
  server.serve(`${prefix}/blueprints/redis/docker-compose.yml`, 'services:\n  redis:\n    image: redis:8\n');
  server.serve(`${prefix}/blueprints/redis/template.toml`, '[config.env]\nREMOTE = "yes"\n');
}

let t: TestPlatform;
let env: string;
let http: CatalogServer;
beforeAll(async () => {
  http = await catalogServer();
  serveRemoteCatalog(http, '/catalog');
  // Outbound policy as by default (SKIFF_OUTBOUND_ALLOW_PRIVATE unset): caller-named catalogs on public addresses only.
  t = await startTestPlatform({ publicIp: PUBLIC_IP, outbound: { allowPrivate: false } });
  env = (await t.call('project.create', { name: 'templates' })).body.environments[0].environmentId;
});
afterAll(async () => {
  await t?.close();
  await http?.close();
});

const createStack = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('compose.create', { name: 'Templated', environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const privateServer = async () => {
  const id = `srv_${Math.random().toString(16).slice(2, 10)}`;
  await t.db.insertInto('servers').values({ id, organizationId: t.organizationId, name: 'lan', address: '10.0.0.9', description: null }).execute();
  return id;
};

const stacksIn = async (environmentId: string) =>
  (await t.db.selectFrom('composeStacks').select('id').where('environmentId', '=', environmentId).execute()).length;

describe('the bundled catalog', () => {
  it('lists every bundled template, filtered by tags (any of them, any case)', async () => {
    const all = await t.call('compose.templates');
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.map((e: { id: string }) => e.id)).toEqual(BUNDLED);
    for (const entry of all.body) {
      expect(entry.source).toBe('bundled');
      expect(entry.name).not.toBe('');
      expect(entry.tags.length).toBeGreaterThan(0);
    }
    const monitoring = await t.call('compose.templates', { tags: ['MONITORING'] });
    expect(monitoring.body.map((e: { id: string }) => e.id)).toEqual(['uptime-kuma']);
    const either = await t.call('compose.templates', { tags: ['static', 'cache'] });
    expect(either.body.map((e: { id: string }) => e.id)).toEqual(['redis', 'static-page', 'redis-commander']);
    expect((await t.call('compose.templates', { tags: ['nothing-has-this'] })).body).toEqual([]);
  });

  it('lists the tags once each, sorted', async () => {
    const tags = await t.call('compose.getTags');
    expect(tags.status).toBe(200);
    expect(tags.body).toEqual([...new Set(tags.body)].sort());
    expect(tags.body).toEqual(expect.arrayContaining(['cache', 'database', 'monitoring', 'static']));
  });

  it('stops the start on a broken template, naming it and the reason', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'skiff-catalog-'));
    try {
      const write = async (path: string, text: string) => {
        await mkdir(join(dir, path, '..'), { recursive: true });
        await writeFile(join(dir, path), text);
      };
      await write('meta.json', JSON.stringify([{ id: 'web', name: 'Web', tags: ['x'] }]));
      await write('blueprints/web/docker-compose.yml', 'services:\n  web:\n    image: busybox:latest\n');
      await write('blueprints/web/template.toml', '[config.env]\nA = "${missing}"\n');
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/template "web": config\.env\.A: unknown variable "missing"/);
      // Through the platform's start, too.
      await expect(startTestPlatform({ templates: { dir } })).rejects.toThrow(/template "web"/);

      await write('blueprints/web/template.toml', '[[config.domains]]\nserviceName = "api"\nport = 80\nhost = "a.example.com"\n');
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/service "api" is not in the template's compose file/);
      await rm(join(dir, 'blueprints/web/template.toml'));
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/template "web": .*ENOENT/);
      await write('meta.json', JSON.stringify([{ id: 'web', name: 'Web' }, { id: 'web', name: 'Again' }]));
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/"web" is listed twice/);
      await write('meta.json', '{"not": "a list"}');
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/meta\.json must be a JSON list/);
      await write('meta.json', JSON.stringify([{ id: 'a/b', name: 'Slash' }]));
      await expect(loadBundledCatalog(dir)).rejects.toThrow(/template "a\/b": id:/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('ships valid templates', async () => {
    const catalog = await loadBundledCatalog(bundledCatalogDir());
    expect([...catalog.templates.keys()]).toEqual(BUNDLED);
  });
});

describe('compose.processTemplate', () => {
  it('resolves the helpers with fresh values and generated domains, and saves nothing', async () => {
    const stack = await createStack();
    const res = await t.call('compose.processTemplate', { composeId: stack.composeId, base64: HELPERS_TEMPLATE });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { compose, env: envText, domains, mounts } = res.body;
    expect(compose).toBe(WEB_COMPOSE);
    expect(mounts).toEqual([]);
    const vars = parseDotenv(envText);
    expect(vars.get('DB_PASSWORD')).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(vars.get('DB_PASSWORD_AGAIN')).toBe(vars.get('DB_PASSWORD'));
    expect(Buffer.from(vars.get('SECRET')!, 'base64')).toHaveLength(24);
    expect(vars.get('TOKEN')).toMatch(/^[0-9a-f]{12}$/);
    expect(vars.get('INSTANCE')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const generated = new RegExp(`^${stack.appName}-[0-9a-f]{6}-93-184-216-40\\.sslip\\.io$`);
    expect(domains).toHaveLength(2);
    expect(domains[0]).toMatchObject({ serviceName: 'web', port: 8080, path: null });
    expect(domains[0].host).toMatch(generated);
    expect(vars.get('URL')).toBe(`http://${domains[0].host}`);
    // A domain without a host gets its own generated one.
    expect(domains[1]).toMatchObject({ serviceName: 'cache', port: 6379, path: '/admin' });
    expect(domains[1].host).toMatch(generated);
    expect(domains[1].host).not.toBe(domains[0].host);

    const again = await t.call('compose.processTemplate', { composeId: stack.composeId, base64: HELPERS_TEMPLATE });
    expect(parseDotenv(again.body.env).get('DB_PASSWORD')).not.toBe(vars.get('DB_PASSWORD'));
    expect((await t.call('compose.one', { composeId: stack.composeId })).body).toEqual(stack);
    expect((await t.call('domain.byComposeId', { composeId: stack.composeId })).body).toEqual([]);
  });

  it('refuses unreadable templates and unknown references, naming base64 and the place', async () => {
    const stack = await createStack();
    const call = (base64: string) => t.call('compose.processTemplate', { composeId: stack.composeId, base64 });
    const notBase64 = await call('%%%');
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.issues[0]).toMatchObject({ path: ['base64'], message: 'the template is not base64' });
    const unknown = await call(encode(WEB_COMPOSE, '[config.env]\nA = "${nope}"\n'));
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toEqual(['base64']);
    expect(unknown.body.issues[0].message).toContain('config.env.A: unknown variable "nope"');
    const badCompose = await call(encode('services: [', ''));
    expect(badCompose.status).toBe(400);
    expect(badCompose.body.issues[0].message).toMatch(/compose file/);
  });

  it('says why no domain can be generated on a server without a public IPv4', async () => {
    const serverId = await privateServer();
    const stack = await createStack({ serverId });
    const res = await t.call('compose.processTemplate', { composeId: stack.composeId, base64: HELPERS_TEMPLATE });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['base64']);
    expect(res.body.issues[0].message).toContain("the server's address 10.0.0.9 is not a public IPv4 address");
    // A template without generated domains does not need one.
    const plain = await t.call('compose.processTemplate', { composeId: stack.composeId, base64: encode(WEB_COMPOSE, '[config.env]\nA = "${hash}"\n') });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
  });

  it("does not reach another organization's stack", async () => {
    const stack = await createStack();
    const res = await (await otherOrganization(t))('compose.processTemplate', { composeId: stack.composeId, base64: HELPERS_TEMPLATE });
    expect(res.status).toBe(404);
  });
});

describe('compose.import', () => {
  it('stores the compose file, the env (sealed) and the domains on the stack', async () => {
    const stack = await createStack({ sourceType: 'git', composeFile: 'services:\n  old:\n    image: busybox:latest\n' });
    const res = await t.call('compose.import', { composeId: stack.composeId, base64: HELPERS_TEMPLATE });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.compose).toMatchObject({ composeId: stack.composeId, composeFile: WEB_COMPOSE, sourceType: 'raw' });
    const vars = parseDotenv(res.body.compose.env);
    expect(vars.get('DB_PASSWORD')).toMatch(/^[A-Za-z0-9]{16}$/);
    expect(res.body.domains).toHaveLength(2);
    expect(res.body.domains[0]).toMatchObject({ composeId: stack.composeId, domainType: 'compose', serviceName: 'web', port: 8080, path: '/', https: false, certificateType: 'none', enabled: true });
    expect(res.body.domains[1]).toMatchObject({ serviceName: 'cache', port: 6379, path: '/admin' });

    const stored = (await t.call('compose.one', { composeId: stack.composeId })).body;
    expect(stored).toEqual(res.body.compose);
    const listed = (await t.call('domain.byComposeId', { composeId: stack.composeId })).body;
    expect(listed.map((d: { host: string }) => d.host).sort()).toEqual(res.body.domains.map((d: { host: string }) => d.host).sort());
    // The env is encrypted at rest.
    const row = await t.db.selectFrom('composeStacks').select('env').where('id', '=', stack.composeId).executeTakeFirstOrThrow();
    expect(row.env).not.toContain(vars.get('DB_PASSWORD'));
  });

  it('changes nothing when a domain of the template is already routed on the server', async () => {
    const first = await createStack();
    const fixed = encode(WEB_COMPOSE, '[config.env]\nA = "1"\n\n[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "Shop.Example.com"\n');
    expect((await t.call('compose.import', { composeId: first.composeId, base64: fixed })).status).toBe(200);
    const second = await createStack({ composeFile: 'services:\n  keep:\n    image: busybox:latest\n' });
    const clash = await t.call('compose.import', { composeId: second.composeId, base64: fixed });
    expect(clash.status).toBe(400);
    expect(clash.body.issues[0].path).toEqual(['base64']);
    expect(clash.body.issues[0].message).toContain('shop.example.com is already routed on this server');
    expect((await t.call('compose.one', { composeId: second.composeId })).body).toEqual(second);
    expect((await t.call('domain.byComposeId', { composeId: second.composeId })).body).toEqual([]);
    // Twice in one template.
    const twice = encode(WEB_COMPOSE, '[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "twice.example.com"\n\n[[config.domains]]\nserviceName = "cache"\nport = 80\nhost = "twice.example.com"\n');
    const res = await t.call('compose.import', { composeId: second.composeId, base64: twice });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].message).toContain('routed twice');
  });

  it("refuses a template domain on another organization's host (another path), changing nothing", async () => {
    const first = await createStack();
    const owned = encode(WEB_COMPOSE, '[[config.domains]]\nserviceName = "web"\nport = 80\nhost = "owned.example.com"\n');
    expect((await t.call('compose.import', { composeId: first.composeId, base64: owned })).status).toBe(200);
    const org = await t.call('organization.create', { name: `Taker ${Math.random()}` });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.body.organizationId } })).body.key;
    const outsider = t.as(key);
    const project = (await outsider('project.create', { name: 'takers' })).body;
    const theirs = (await outsider('compose.create', { name: 'taker', environmentId: project.environments[0].environmentId })).body;
    for (const route of ['host = "owned.example.com"\npath = "/login"', 'host = "OWNED.example.com"\npath = "/api"']) {
      const res = await outsider('compose.import', { composeId: theirs.composeId, base64: encode(WEB_COMPOSE, `[[config.domains]]\nserviceName = "web"\nport = 80\n${route}\n`) });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.issues[0].path).toEqual(['base64']);
      expect(res.body.issues[0].message).toContain('another organization');
    }
    expect((await outsider('domain.byComposeId', { composeId: theirs.composeId })).body).toEqual([]);
  });

  it('keeps the files a template writes beside the compose file, sealed; refuses one named like the compose file', async () => {
    const stack = await createStack();
    const withMount = encode(WEB_COMPOSE, '[[config.mounts]]\nfilePath = "conf/app.conf"\ncontent = "x=${password:8}"\n');
    const preview = await t.call('compose.processTemplate', { composeId: stack.composeId, base64: withMount });
    expect(preview.body.mounts[0].filePath).toBe('conf/app.conf');
    expect(preview.body.mounts[0].content).toMatch(/^x=[A-Za-z0-9]{8}$/);
    const res = await t.call('compose.import', { composeId: stack.composeId, base64: withMount });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const sealed = (await t.db.selectFrom('composeStacks').select('configFiles').where('id', '=', stack.composeId).executeTakeFirstOrThrow()).configFiles;
    const files = JSON.parse(t.platform.secrets.open(sealed!)) as { filePath: string; content: string }[];
    expect(files).toEqual([{ filePath: 'conf/app.conf', content: expect.stringMatching(/^x=[A-Za-z0-9]{8}$/) }]);

    const other = await createStack();
    const taken = encode(WEB_COMPOSE, '[[config.mounts]]\nfilePath = ".env"\ncontent = "A=1"\n');
    const refused = await t.call('compose.import', { composeId: other.composeId, base64: taken });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].message).toContain('config.mounts');
    // A name the file system cannot hold (over 255 bytes), and the ways out of the folder.
    for (const path of [`conf/${'é'.repeat(128)}`, 'conf/../../x', 'a/./b', 'a\\\\b']) {
      const bad = await t.call('compose.import', { composeId: other.composeId, base64: encode(WEB_COMPOSE, `[[config.mounts]]\nfilePath = "${path}"\ncontent = "A=1"\n`) });
      expect(bad.status, `${path}: ${JSON.stringify(bad.body)}`).toBe(400);
      expect(bad.body.issues[0].path).toEqual(['base64']);
      expect(bad.body.issues[0].message).toContain('config.mounts');
    }
    expect((await t.call('compose.one', { composeId: other.composeId })).body).toEqual(other);
  });
});

describe('compose.deployTemplate', () => {
  it('creates a stack from a bundled template with its env and domains', async () => {
    const res = await t.call('compose.deployTemplate', { environmentId: env, id: 'static-page' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { compose, domains, deployment } = res.body;
    expect(compose).toMatchObject({ name: 'Static page', environmentId: env, serverId: null, sourceType: 'raw', composeType: 'container-compose' });
    expect(compose.appName).toMatch(/^static-page-[0-9a-f]{6}$/);
    expect(compose.composeFile).toContain('image: busybox:latest');
    expect(parseDotenv(compose.env).get('PAGE_TITLE')).toBe('Hello from Skiff');
    expect(domains).toHaveLength(1);
    expect(domains[0]).toMatchObject({ composeId: compose.composeId, serviceName: 'web', port: 8080 });
    expect(domains[0].host).toMatch(new RegExp(`^${compose.appName}-[0-9a-f]{6}-93-184-216-40\\.sslip\\.io$`));
    // Its first deployment is queued.
    expect(deployment).toMatchObject({ composeId: compose.composeId, status: 'queued' });
    expect((await t.call('compose.one', { composeId: compose.composeId })).body).toMatchObject({ composeId: compose.composeId, appName: compose.appName });

    const redis = await t.call('compose.deployTemplate', { environmentId: env, id: 'redis' });
    expect(redis.status).toBe(200);
    expect(parseDotenv(redis.body.compose.env).get('REDIS_PASSWORD')).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(redis.body.domains).toEqual([]);
  });

  it('leaves nothing behind when the template or its place is refused', async () => {
    const before = await stacksIn(env);
    const unknown = await t.call('compose.deployTemplate', { environmentId: env, id: 'no-such-template' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0]).toMatchObject({ path: ['id'], message: 'the catalog has no template "no-such-template"' });
    const badHost = await t.call('compose.deployTemplate', { environmentId: env, id: 'caddy', host: 'https://x.example.com/' });
    expect(badHost.status).toBe(400);
    expect(badHost.body.issues[0].path).toEqual(['host']);
    expect(await stacksIn(env)).toBe(before);
    expect((await t.call('compose.deployTemplate', { environmentId: 'env_missing', id: 'redis' })).status).toBe(404);
    expect((await t.call('compose.deployTemplate', { environmentId: env, id: 'redis', serverId: 'srv_missing' })).body.issues[0].path).toEqual(['serverId']);
  });
});

describe('compose.deployTemplate where no domain can be generated', () => {
  it('deploys without the generated domains, saying why and naming the setting', async () => {
    const bare = await startTestPlatform();
    try {
      const bareEnv = (await bare.call('project.create', { name: 'no-ip' })).body.environments[0].environmentId;
      const res = await bare.call('compose.deployTemplate', { environmentId: bareEnv, id: 'static-page' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.domains).toEqual([]);
      expect(res.body.deployment).toMatchObject({ status: 'queued' });
      expect(res.body.warnings).toEqual([expect.stringContaining('SKIFF_PUBLIC_IP')]);
      expect(res.body.warnings[0]).toContain('`host`');
      expect(await bare.db.selectFrom('domains').select('id').where('composeId', '=', res.body.compose.composeId).execute()).toEqual([]);

      // `${domain}` reads `localhost` in the env of a template that uses it.
      const caddy = await bare.call('compose.deployTemplate', { environmentId: bareEnv, id: 'caddy' });
      expect(caddy.status, JSON.stringify(caddy.body)).toBe(200);
      expect(caddy.body.domains).toEqual([]);

      // A host from the caller is used instead.
      const hosted = await bare.call('compose.deployTemplate', { environmentId: bareEnv, id: 'caddy', host: 'Site.Example.com' });
      expect(hosted.status, JSON.stringify(hosted.body)).toBe(200);
      expect(hosted.body.warnings).toEqual([]);
      expect(hosted.body.domains.map((d: { host: string }) => d.host)).toEqual(['site.example.com']);
    } finally {
      await bare.close();
    }
  });

  it('does so on a server without a public IPv4 too', async () => {
    const serverId = await privateServer();
    const res = await t.call('compose.deployTemplate', { environmentId: env, id: 'caddy', serverId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.domains).toEqual([]);
    expect(res.body.warnings).toEqual([expect.stringContaining("the server's address 10.0.0.9 is not a public IPv4 address")]);
  });
});

describe('catalog URLs', () => {
  it('refuses link-local, metadata, non-http and (for caller-named catalogs) private addresses', async () => {
    const refused = async (baseUrl: string, message: string | RegExp) => {
      const res = await t.call('compose.templates', { baseUrl });
      expect(res.status, baseUrl).toBe(400);
      expect(res.body.issues[0].path).toEqual(['baseUrl']);
      expect(res.body.issues[0].message).toMatch(message);
    };
    await refused('http://169.254.169.254/latest', /link-local/);
    await refused('http://[fe80::1]/', /link-local/);
    await refused('http://metadata.google.internal/', /metadata/);
    await refused('http://[::ffff:169.254.169.254]/', /link-local/);
    await refused('ftp://example.com/catalog', /http\(s\)/);
    await refused('http://user:pw@example.com/', /credentials/);
    await refused('http://example.com/catalog?x=1', /query/);
    // Loopback and private networks only for the operator's catalog (or with SKIFF_OUTBOUND_ALLOW_PRIVATE=1): judged on the address…
    await refused(`${http.base}/catalog`, /127\.0\.0\.1: loopback addresses \(127\.0\.0\.0\/8\) are refused \(the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1\)/);
    await refused('http://10.1.2.3/catalog', /private addresses \(10\.0\.0\.0\/8\) are refused/);
    // …and on what a name resolves to, when connecting.
    await refused(`http://localhost:${http.port}/catalog`, /localhost resolves to (127\.0\.0\.1|::1): loopback addresses/);
    expect((await t.call('compose.deployTemplate', { environmentId: env, id: 'whoami', baseUrl: `${http.base}/catalog` })).body.issues[0].path).toEqual(['baseUrl']);
  });

  it('refuses an operator catalog URL on a link-local or metadata address at start', () => {
    expect(() => readConfig({ SKIFF_TEMPLATES_URL: 'http://169.254.169.254/templates' }, 'test')).toThrow(/SKIFF_TEMPLATES_URL link-local/);
    expect(() => readConfig({ SKIFF_TEMPLATES_URL: 'http://[fd00:ec2::254]/' }, 'test')).toThrow(/SKIFF_TEMPLATES_URL cloud metadata/);
    expect(() => readConfig({ SKIFF_TEMPLATES_URL: 'file:///etc/passwd' }, 'test')).toThrow(/SKIFF_TEMPLATES_URL must be an http/);
    expect(readConfig({ SKIFF_TEMPLATES_URL: ' http://10.0.0.5/catalog/ ' }, 'test').templatesUrl).toBe('http://10.0.0.5/catalog/');
  });
});

describe('the operator catalog (SKIFF_TEMPLATES_URL)', () => {
  let remote: TestPlatform;
  let remoteEnv: string;
  beforeAll(async () => {
    remote = await startTestPlatform({ publicIp: PUBLIC_IP, templates: { url: `${http.base}/catalog/` } });
    remoteEnv = (await remote.call('project.create', { name: 'remote' })).body.environments[0].environmentId;
  });
  afterAll(() => remote?.close());

  it('merges over the bundled catalog: same ids replaced, new ones added, invalid entries skipped', async () => {
    const res = await remote.call('compose.templates');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.map((e: { id: string }) => e.id)).toEqual([...BUNDLED, 'whoami']);
    const redis = res.body.find((e: { id: string }) => e.id === 'redis');
    expect(redis).toEqual({
      id: 'redis',
      name: 'Redis (remote)',
      version: '8.2',
      description: 'from the remote catalog',
      tags: ['database'],
      logo: `${http.base}/catalog/blueprints/redis/redis.svg`,
      links: {},
      source: 'remote',
    });
    const whoami = res.body.find((e: { id: string }) => e.id === 'whoami');
    expect(whoami).toMatchObject({ name: 'Who am I', links: { github: 'https://github.com/traefik/whoami' }, source: 'remote' });
    expect(res.body.find((e: { id: string }) => e.id === 'caddy').source).toBe('bundled');
    expect((await remote.call('compose.getTags')).body).toContain('debug');
    // Naming the operator's catalog reads it alone, loopback or not.
    const alone = await remote.call('compose.templates', { baseUrl: `${http.base}/catalog` });
    expect(alone.body.map((e: { id: string }) => e.id)).toEqual(['redis', 'whoami']);
  });

  it("deploys a remote template from its files, and the remote version of a replaced one", async () => {
    const whoami = await remote.call('compose.deployTemplate', { environmentId: remoteEnv, id: 'whoami' });
    expect(whoami.status, JSON.stringify(whoami.body)).toBe(200);
    expect(whoami.body.compose.composeFile).toContain('traefik/whoami:v1.10');
    expect(whoami.body.domains[0]).toMatchObject({ serviceName: 'whoami', port: 80 });
    const redis = await remote.call('compose.deployTemplate', { environmentId: remoteEnv, id: 'redis' });
    expect(redis.status).toBe(200);
    expect(redis.body.compose.name).toBe('Redis (remote)');
    expect(parseDotenv(redis.body.compose.env).get('REMOTE')).toBe('yes');
  });

  it('names the template and the reason when its files are missing or broken', async () => {
    http.serve('/catalog/blueprints/whoami/template.toml', '[variables\n');
    try {
      const broken = await remote.call('compose.deployTemplate', { environmentId: remoteEnv, id: 'whoami' });
      expect(broken.status).toBe(400);
      expect(broken.body.issues[0]).toMatchObject({ path: ['id'] });
      expect(broken.body.issues[0].message).toMatch(/^template "whoami": the template's config is not valid TOML/);
      http.routes.delete('/catalog/blueprints/whoami/template.toml');
      const missing = await remote.call('compose.deployTemplate', { environmentId: remoteEnv, id: 'whoami' });
      expect(missing.body.issues[0].message).toBe(`template "whoami" could not be read: ${http.base}/catalog/blueprints/whoami/template.toml: answered HTTP 404`);
    } finally {
      serveRemoteCatalog(http, '/catalog');
    }
  });

  it('answers a clear error when the operator catalog cannot be read', async () => {
    const down = await startTestPlatform({ templates: { url: `${http.base}/down` } });
    try {
      const res = await down.call('compose.templates');
      expect(res.status).toBe(400);
      expect(res.body.issues[0]).toEqual({
        path: ['baseUrl'],
        message: `the template catalog ${http.base}/down could not be read: ${http.base}/down/meta.json: answered HTTP 404`,
      });
    } finally {
      await down.close();
    }
  });
});

describe('remote catalog answers', () => {
  const limits = { maxIndexBytes: 64 * 1024, maxFileBytes: 1024, timeoutMs: 500, cacheMs: 0 };
  const catalog = (prefix: string) => new RemoteCatalog(`${http.base}${prefix}`, OPERATOR_CATALOG, limits, { now: Date.now });

  it('refuses broken answers with the reason', async () => {
    http.serve('/garbage/meta.json', '<html>oops</html>');
    await expect(catalog('/garbage').entries()).rejects.toThrow(`${http.base}/garbage/meta.json: meta.json is not JSON`);
    http.serve('/object/meta.json', '{"templates": []}');
    await expect(catalog('/object').entries()).rejects.toThrow(/meta\.json must be a JSON list/);
    http.serve('/huge/meta.json', JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: `t${i}`, name: 'x'.repeat(20) }))));
    await expect(catalog('/huge').entries()).rejects.toThrow(/the answer is larger than 65536 bytes/);
    http.routes.set('/chunked/meta.json', (res) => {
      res.writeHead(200);
      for (let i = 0; i < 100; i++) res.write('x'.repeat(1024));
      res.end();
    });
    await expect(catalog('/chunked').entries()).rejects.toThrow(/larger than 65536 bytes/);
    http.routes.set('/binary/meta.json', (res) => res.writeHead(200).end(Buffer.from([0xff, 0xfe, 0x00])));
    await expect(catalog('/binary').entries()).rejects.toThrow(/not UTF-8/);
    http.routes.set('/error/meta.json', (res) => res.writeHead(503).end('busy'));
    await expect(catalog('/error').entries()).rejects.toThrow(/answered HTTP 503/);
    http.routes.set('/hang/meta.json', () => {});
    const started = Date.now();
    await expect(catalog('/hang').entries()).rejects.toThrow(/no complete answer within 500 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
    http.routes.set('/cut/meta.json', (res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('[');
      setTimeout(() => res.destroy(), 20);
    });
    await expect(catalog('/cut').entries()).rejects.toThrow(/closed before the answer was complete|reset/);
  });

  it('follows no redirect, naming where it pointed', async () => {
    http.routes.set('/moved/meta.json', (res) => res.writeHead(302, { location: '/catalog/meta.json' }).end());
    await expect(catalog('/moved').entries()).rejects.toThrow(`${http.base}/moved/meta.json: redirected to ${http.base}/catalog/meta.json (HTTP 302); redirects are not followed`);
    http.routes.set('/metadata/meta.json', (res) => res.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end());
    await expect(catalog('/metadata').entries()).rejects.toThrow('redirected to http://169.254.169.254/latest/meta-data/ (HTTP 301); redirects are not followed');
  });

  it('keeps using the last good copy when fetching again fails', async () => {
    serveRemoteCatalog(http, '/flaky');
    const stale: string[] = [];
    const flaky = new RemoteCatalog(`${http.base}/flaky`, OPERATOR_CATALOG, limits, { now: Date.now, onStale: (reason) => stale.push(reason) });
    expect((await flaky.entries()).map((e) => e.id)).toEqual(['redis', 'whoami']);
    http.routes.set('/flaky/meta.json', (res) => res.writeHead(500).end());
    expect((await flaky.entries()).map((e) => e.id)).toEqual(['redis', 'whoami']);
    expect(stale).toEqual([`${http.base}/flaky/meta.json: answered HTTP 500`]);
  });
});
