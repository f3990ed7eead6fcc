// The proxy settings end to end over the API, with the real agent and its Caddy: edits of the
// three configuration files (refused ones leave every route answering), shared middlewares on
// a domain, the files' paths kept inside the configuration directory, reload, the dashboard
// (Caddy's metrics), the container's environment, and the platform's own domain routed to
// this control plane's API. One stack (its own agent and skiff-proxy container, the API also
// served where the container reaches the host) and two deployed applications serve all.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer } from './testing/harness.js';
import { answers, throughProxy, type ProxyRequest } from './testing/proxy-client.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

const CHANGE_MS = 30_000;

let s: TestStack;
let hostA: string;
let hostB: string;
let domainA: string;

/** busybox httpd on 8080 answering `page` at `/`. */
const pageOf = (page: string) => ({
  env: `PAGE=${page}`,
  command: 'sh',
  args: ['-c', 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www'],
  endpointSpecCluster: { Mode: 'dnsrr' },
});

async function deployed(name: string) {
  const app = await s.containerApplication(name, { containerImage: 'busybox:latest' });
  const updated = await s.t.call('application.update', { applicationId: app.applicationId, ...pageOf(name) });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
  expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
  return app.applicationId;
}

const domainInput = (applicationId: string, host: string) => ({
  host,
  path: '/',
  port: 8080,
  https: false,
  certificateType: 'none',
  domainType: 'application',
  applicationId,
});

async function createDomain(applicationId: string, host: string) {
  const res = await s.t.call('domain.create', domainInput(applicationId, host));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.domainId as string;
}

beforeAll(async () => {
  s = await startTestStack('proxy-settings', { servePlatformDomain: true });
  hostA = `a-${s.run}.skiff.test`;
  hostB = `b-${s.run}.skiff.test`;
  const [appA, appB] = await Promise.all([deployed('a'), deployed('b')]);
  domainA = await createDomain(appA, hostA);
  await createDomain(appB, hostB);
  await until(answers(http(hostA), 200, 'a'), `${hostA} through the proxy`);
  await until(answers(http(hostB), 200, 'b'), `${hostB} through the proxy`);
}, 180_000);
afterAll(() => s?.close(), 60_000);

const http = (host: string, path = '/', headers?: Record<string, string>): ProxyRequest => ({ port: s.proxy.httpPort, host, path, headers });
/** Waits for `check`; a timeout also shows the end of the agent's output. */
async function until<T>(check: () => Promise<T>, what: string) {
  try {
    return await waitFor(check, { timeoutMs: CHANGE_MS, intervalMs: 200, what });
  } catch (err) {
    throw new Error(`${(err as Error).message}\nagent output: ${s.agentOutput().slice(-1500)}`);
  }
}

/** The answer of one request through the proxy, which must have been an HTTP answer. */
async function get(r: ProxyRequest) {
  const res = await throughProxy(r);
  if (!res.ok) throw new Error(`${r.host}${r.path ?? '/'}: ${res.error}`);
  return res;
}

/** Both applications' domains answer at once (no waiting: a refused edit must not have touched them). */
async function bothAnswer() {
  for (const [host, page] of [[hostA, 'a'], [hostB, 'b']] as const) {
    const res = await get(http(host));
    expect({ host, status: res.status, body: res.body }).toEqual({ host, status: 200, body: page });
  }
}

/** The answer is a BAD_REQUEST naming `field` with a reason; answers the reason. */
function refusedOn(res: Answer, field: string): string {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  const issue = (res.body.issues as { path: unknown[]; message: string }[]).find((i) => i.path[0] === field);
  expect(issue, `an issue naming ${field} in ${JSON.stringify(res.body)}`).toBeDefined();
  expect(issue!.message.length).toBeGreaterThan(0);
  return issue!.message;
}

async function ok(operation: string, input: Record<string, unknown> = {}) {
  const res = await s.t.call(operation, input);
  expect(res.status, `${operation}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

/** The proxy's configuration directory and the agent's files beside it. */
const proxyDir = () => join(s.agentDir, 'proxy');
const configDir = () => join(proxyDir(), 'config');

/** Content and modification time of each regular file of the agent's proxy directory but the configuration directory's (input.json, last-good.json, …). */
function proxyFilesOutsideConfig(): Record<string, string> {
  const seen: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (path === configDir()) continue;
      const stats = statSync(path, { throwIfNoEntry: false });
      if (stats?.isDirectory()) walk(path);
      else if (stats?.isFile()) seen[path] = `${stats.mtimeMs} ${readFileSync(path, 'utf8')}`;
    }
  };
  walk(proxyDir());
  return seen;
}

const container = async () => {
  const res = await docker(['inspect', '--format', '{{.Id}} {{.State.StartedAt}}', s.proxy.container]);
  expect(res.ok, res.out).toBe(true);
  return res.out;
};

/** The dashboard's metrics page, or null while nothing answers there. */
async function metrics(): Promise<{ status: number; text: string } | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${s.proxy.dashboardPort}/metrics`, { signal: AbortSignal.timeout(3_000) });
    return { status: res.status, text: await res.text() };
  } catch {
    return null;
  }
}

describe('proxy settings through the API', () => {
  it('refuses broken edits, keeps the old content, and every domain keeps answering', async () => {
    const middlewares = await ok('settings.readMiddlewareProxyConfig');
    const global = await ok('settings.readProxyConfig');
    expect(middlewares).toBe('{}\n');
    expect(global).toBe('{}\n');

    const notJson = refusedOn(await s.t.call('settings.updateMiddlewareProxyConfig', { proxyConfig: '{"x": [' }), 'proxyConfig');
    expect(notJson).toMatch(/not valid JSON/);
    await bothAnswer();

    // Caddy itself refuses it (no such app module): the renderer passes global options on as they are.
    const unknownApp = refusedOn(await s.t.call('settings.updateProxyConfig', { proxyConfig: '{"apps":{"nope":{}}}' }), 'proxyConfig');
    expect(unknownApp).toMatch(/Caddy refused.*nope/);
    await bothAnswer();

    const admin = refusedOn(await s.t.call('settings.updateProxyConfig', { proxyConfig: '{"admin":{"listen":"0.0.0.0:2019"}}' }), 'proxyConfig');
    expect(admin).toMatch(/admin/);
    await bothAnswer();

    expect(await ok('settings.readMiddlewareProxyConfig')).toBe(middlewares);
    expect(await ok('settings.readProxyConfig')).toBe(global);
  }, 60_000);

  // Accepted, it would be refused with every later config the day a domain names it (or the
  // platform site gets a host).
  it('refuses a middleware or platform handler Caddy does not know, even while nothing uses it', async () => {
    const before = await ok('settings.readMiddlewareProxyConfig');
    const platformBefore = await ok('settings.readWebServerProxyConfig');
    try {
      const res = await s.t.call('settings.updateMiddlewareProxyConfig', { proxyConfig: '{"x":[{"handler":"nope"}]}' });
      expect(refusedOn(res, 'proxyConfig')).toMatch(/nope/);
      await bothAnswer();
      expect(await ok('settings.readMiddlewareProxyConfig')).toBe(before);
      const platform = await s.t.call('settings.updateWebServerProxyConfig', { proxyConfig: '[{"handler":"nope"}]' });
      expect(refusedOn(platform, 'proxyConfig')).toMatch(/nope/);
      expect(await ok('settings.readWebServerProxyConfig')).toBe(platformBefore);
    } finally {
      await s.t.call('settings.updateMiddlewareProxyConfig', { proxyConfig: before });
    }
  }, 60_000);

  it('runs a shared middleware a domain names, refuses removing it while used, and refuses an unknown one', async () => {
    const header = `e2e-${s.run}`;
    const shared = JSON.stringify({ 'e2e-header': [{ handler: 'headers', response: { set: { 'X-Skiff-E2e': [header] } } }] });
    await ok('settings.updateMiddlewareProxyConfig', { proxyConfig: shared });
    expect(await ok('settings.readMiddlewareProxyConfig')).toBe(shared);

    await ok('domain.update', { domainId: domainA, host: hostA, middlewares: ['e2e-header'] });
    const withHeader = await until(async () => {
      const res = await get(http(hostA));
      return res.status === 200 && res.headers['x-skiff-e2e'] === header ? res : null;
    }, `${hostA} to answer with the middleware's header`);
    expect(withHeader.body).toBe('a');
    expect((await get(http(hostB))).headers['x-skiff-e2e']).toBeUndefined();

    const unknownHandler = JSON.stringify({ 'e2e-header': [{ handler: 'nope' }] });
    const refusedByCaddy = refusedOn(await s.t.call('settings.updateMiddlewareProxyConfig', { proxyConfig: unknownHandler }), 'proxyConfig');
    expect(refusedByCaddy).toMatch(/Caddy refused.*nope/);
    expect((await get(http(hostA))).headers['x-skiff-e2e']).toBe(header);
    await bothAnswer();

    const removal = refusedOn(await s.t.call('settings.updateMiddlewareProxyConfig', { proxyConfig: '{}' }), 'proxyConfig');
    expect(removal).toMatch(/e2e-header/);
    expect(await ok('settings.readMiddlewareProxyConfig')).toBe(shared);
    const still = await get(http(hostA));
    expect([still.status, still.body, still.headers['x-skiff-e2e']]).toEqual([200, 'a', header]);
    await bothAnswer();

    const { applicationId } = (await ok('domain.one', { domainId: domainA })) as { applicationId: string };
    const unknown = await s.t.call('domain.create', { ...domainInput(applicationId, `c-${s.run}.skiff.test`), middlewares: ['no-such-middleware'] });
    expect(refusedOn(unknown, 'middlewares')).toMatch(/no-such-middleware/);
  }, 90_000);

  it('accepts global options and handlers of the platform site, and reads them back', async () => {
    const global = '{"logging":{"logs":{"default":{"level":"WARN"}}}}';
    await ok('settings.updateProxyConfig', { proxyConfig: global });
    expect(await ok('settings.readProxyConfig')).toBe(global);
    // Caddy runs it: the config it last accepted (the one it boots from) has the level.
    const lastGood = JSON.parse(readFileSync(join(proxyDir(), 'last-good.json'), 'utf8'));
    expect(lastGood.logging.logs.default.level).toBe('WARN');

    const platform = '[{"handler":"headers","response":{"set":{"X-Skiff-Platform":["e2e"]}}}]';
    await ok('settings.updateWebServerProxyConfig', { proxyConfig: platform });
    expect(await ok('settings.readWebServerProxyConfig')).toBe(platform);
    await bothAnswer();
  }, 60_000);

  it('lists and reads the three files, and refuses every path leaving the configuration directory', async () => {
    const tree = (await ok('settings.readDirectories')) as { name: string; path: string; type: string }[];
    const files = tree.filter((e) => e.type === 'file');
    expect(files.map((e) => [e.name, e.path])).toEqual(
      ['global.json', 'middlewares.json', 'platform.json'].map((name) => [name, join(configDir(), name)]),
    );
    const middlewares = await ok('settings.readMiddlewareProxyConfig');
    expect(await ok('settings.readProxyFile', { path: 'middlewares.json' })).toBe(middlewares);
    expect(await ok('settings.readProxyFile', { path: files.find((e) => e.name === 'middlewares.json')!.path })).toBe(middlewares);

    const before = proxyFilesOutsideConfig();
    expect(Object.keys(before)).toEqual(expect.arrayContaining([join(proxyDir(), 'input.json'), join(proxyDir(), 'last-good.json')]));
    const leaving = [
      '../input.json',
      '../../etc/passwd',
      join(proxyDir(), 'input.json'),
      `${configDir()}/../last-good.json`,
      '/etc/passwd',
      'config/../../last-good.json',
      'global.json/../../input.json',
    ];
    for (const path of leaving) {
      expect(refusedOn(await s.t.call('settings.readProxyFile', { path }), 'path'), path).toMatch(/inside the proxy configuration directory|no such file/);
      const write = await s.t.call('settings.updateProxyFile', { path, proxyConfig: '{}' });
      expect(refusedOn(write, 'path'), path).toMatch(/inside the proxy configuration directory|only global.json/);
    }
    // Taken literally, not decoded: a name inside the directory that does not exist.
    expect(refusedOn(await s.t.call('settings.readProxyFile', { path: '%2e%2e/input.json' }), 'path')).toMatch(/no such file/);
    expect(refusedOn(await s.t.call('settings.updateProxyFile', { path: '%2e%2e/x', proxyConfig: '{}' }), 'path')).toMatch(/only/);
    // Inside the directory, but not one of the three files.
    for (const path of ['extra.json', join(configDir(), 'extra.json')]) {
      expect(refusedOn(await s.t.call('settings.updateProxyFile', { path, proxyConfig: '{}' }), 'path'), path).toMatch(/only/);
    }

    expect(proxyFilesOutsideConfig()).toEqual(before);
    expect(readdirSync(configDir()).sort()).toEqual(['global.json', 'middlewares.json', 'platform.json']);
    expect(existsSync(join(s.agentDir, 'etc'))).toBe(false);
    await bothAnswer();
  }, 60_000);

  it('reloads without restarting the proxy, serves the metrics dashboard while on, and answers its environment', async () => {
    const running = await container();
    expect(await ok('settings.reloadProxy')).toEqual({});
    expect(await container()).toBe(running);
    await bothAnswer();

    expect(await ok('settings.toggleDashboard', { enableDashboard: true })).toEqual({ enabled: true, port: s.proxy.dashboardPort });
    const page = await until(async () => {
      const res = await metrics();
      return res?.status === 200 ? res : null;
    }, 'the dashboard to serve /metrics');
    expect(page.text).toMatch(/^# (HELP|TYPE) \w+/m);
    expect(await container()).toBe(running);

    expect(await ok('settings.toggleDashboard', { enableDashboard: false })).toEqual({ enabled: false, port: s.proxy.dashboardPort });
    await until(async () => (await metrics()) === null, 'the dashboard to stop answering');
    await bothAnswer();

    const env = (await ok('settings.readProxyEnv')) as Record<string, string>;
    const inspected = await docker(['inspect', '--format', '{{json .Config.Env}}', s.proxy.container]);
    const lines = JSON.parse(inspected.out) as string[];
    expect(env.XDG_DATA_HOME).toBe('/data');
    for (const line of lines) {
      const at = line.indexOf('=');
      expect(env[line.slice(0, at)], line).toBe(line.slice(at + 1));
    }
    expect(Object.keys(env).length).toBe(lines.length);
  }, 90_000);

  it("routes the platform's own domain to this control plane's API, after the platform site's handlers", async () => {
    const host = `platform-${s.run}.skiff.test`;
    await ok('settings.assignDomainServer', { host, certificateType: 'none', https: false });
    const health = await until(async () => {
      const res = await get(http(host, '/health'));
      return res.status === 200 ? res : null;
    }, `${host}/health through the proxy`);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    expect(health.headers['x-skiff-platform']).toBe('e2e');

    // The platform site's handlers are rendered now: one Caddy does not know is refused.
    const platform = await ok('settings.readWebServerProxyConfig');
    const refused = await s.t.call('settings.updateWebServerProxyConfig', { proxyConfig: '[{"handler":"nope"}]' });
    expect(refusedOn(refused, 'proxyConfig')).toMatch(/Caddy refused.*nope/);
    expect(await ok('settings.readWebServerProxyConfig')).toBe(platform);
    expect((await get(http(host, '/health'))).headers['x-skiff-platform']).toBe('e2e');

    const version = await get(http(host, '/api/settings.getPlatformVersion', { 'x-api-key': s.t.ownerKey }));
    expect([version.status, JSON.parse(version.body)]).toEqual([200, { version: '0.0.0-test' }]);
    expect((await get(http(host, '/api/settings.getPlatformVersion'))).status).toBe(401);
    await bothAnswer();
  }, 60_000);
});
