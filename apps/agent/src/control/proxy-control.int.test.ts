/**
 * Proxy requests (ProxyControl, ProxyConfigLoader) against the real engine and the real
 * caddy:2 image: the configuration directory (list, read, write, paths refused), writes the
 * renderer or Caddy refuse, the shared middlewares and the platform site's handlers, the
 * dashboard, reload and the proxy's environment; last, the same through NATS to the agent.
 * A busybox web service on skiff-network is reached through the proxy's published ports by
 * its Host header. The proxy container, its volume and the service have names of this run
 * and are removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type ProxyRoute } from '@skiff/domain';
import { CommandStatus, ControlReply, ProxyOperation, type ProxyRequest } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { applyProxyConfigHandler } from '../handlers/apply-proxy-config.js';
import type { CommandHandler } from '../pipeline/handler.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { ProxyConfigLoader } from '../proxy/config-loader.js';
import type { ProxyManager } from '../proxy/proxy-manager.js';
import { ensureCommandStream, requestControl } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';
import { applyProxyConfigCommand, proxyRoute, removeProxyTestObjects, startTestProxy } from '../testing/proxy-fixture.js';
import { ProxyControl } from './proxy-control.js';

const DOCKER = '/usr/bin/docker';
const run = randomBytes(3).toString('hex');
const serverId = `srv-pc-${run}`;
const web = `pc-web-${run}`;
const page = `hello from ${run}`;
const host = `site-${run}.test`;
const platformHost = `platform-${run}.test`;
const containerName = `skiff-proxy-pc-${run}`;
const volumeName = `${containerName}-data`;
const SECRET = `SECRET-${run}`;
const driver = new DockerodeDriver();
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-pc-'));
const configDir = join(dataDir, 'proxy', 'config');
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const ports = { http: 0, https: 0, dashboard: 0 };
let manager: ProxyManager;
let loader: ProxyConfigLoader;
let control: ProxyControl;
let applyHandler: CommandHandler;
let revision = 0;
let nc: NatsConnection | undefined;

const docker = (...args: string[]) => execFileSync(DOCKER, args, { encoding: 'utf8' }).trim();

const route = (overrides: Partial<ProxyRoute> = {}): ProxyRoute => proxyRoute(host, web, { domainId: `dom-${run}`, ...overrides });

const platform = { host: platformHost, upstream: `${web}:8080`, https: false, certificateType: 'none' };

/** ApplyProxyConfig with the next revision: the input later writes render with. */
async function applyInput(routes: ProxyRoute[]): Promise<void> {
  const inputJson = JSON.stringify({ routes, certificates: [], platform, middlewares: {} });
  const command = applyProxyConfigCommand(serverId, `cmd-pc-${run}-${++revision}`, inputJson, revision);
  expect(applyHandler.validate(command)).toBeNull();
  const outcome = await applyHandler.run({ command, signal: new AbortController().signal, deadline: new Date(Date.now() + 60_000), resumed: false, log });
  expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
}

const ask = (operation: ProxyOperation, fields: Partial<ProxyRequest> = {}) => control.handle({ operation, path: '', content: '', ...fields });
const list = () => ask(ProxyOperation.PROXY_OPERATION_LIST_FILES);
const read = (path: string) => ask(ProxyOperation.PROXY_OPERATION_READ_FILE, { path });
const write = (path: string, content: string) => ask(ProxyOperation.PROXY_OPERATION_WRITE_FILE, { path, content });
const toggle = (enableDashboard?: boolean) => ask(ProxyOperation.PROXY_OPERATION_TOGGLE_DASHBOARD, { enableDashboard });

/** The result of a reply that must have succeeded. */
function result(reply: ControlReply): unknown {
  expect(reply.error).toBe('');
  expect(reply.proxy?.refusedField).toBe('');
  return JSON.parse(reply.proxy!.resultJson);
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function get(hostHeader: string, options: { port?: number; path?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      // A fresh connection each time: Caddy closes idle kept-alive ones when it loads a config.
      { host: '127.0.0.1', port: options.port ?? ports.http, path: options.path ?? '/', headers: { Host: hostHeader }, timeout: 3000, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const answersPage = (hostHeader = host) => async () => {
  const res = await get(hostHeader);
  return res.status === 200 && res.body.trim() === page;
};

const fileText = (name: string) => readFileSync(join(configDir, name), 'utf8');
const inspect = () => JSON.parse(docker('inspect', containerName))[0];

beforeAll(async () => {
  const proxy = await startTestProxy({ driver, dataDir, log, containerName, volumeName, web, page, dashboard: true });
  Object.assign(ports, proxy.ports);
  ({ manager, loader } = proxy);
  control = new ProxyControl({ loader, driver, containerName, log, timeoutMs: 30_000 });
  applyHandler = applyProxyConfigHandler({ serverId, loader });
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await removeProxyTestObjects({ containerName, volumeName, services: [web], dataDir, channel: { nc, serverId } });
}, 60_000);

describe('the configuration directory', () => {
  it('is created with its three default files (0700, 0600) and listed with absolute paths', async () => {
    const tree = result(await list());
    expect(tree).toEqual([
      { name: 'global.json', path: join(configDir, 'global.json'), type: 'file' },
      { name: 'middlewares.json', path: join(configDir, 'middlewares.json'), type: 'file' },
      { name: 'platform.json', path: join(configDir, 'platform.json'), type: 'file' },
    ]);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(configDir, 'global.json')).mode & 0o777).toBe(0o600);
    expect(fileText('global.json')).toBe('{}\n');
    expect(fileText('platform.json')).toBe('[]\n');
    expect(fileText('middlewares.json')).toBe('{}\n');
  });

  it('lists subdirectories and their files, leaving symbolic links out', async () => {
    mkdirSync(join(configDir, 'notes'));
    writeFileSync(join(configDir, 'notes', 'readme.txt'), 'about the proxy\n');
    symlinkSync(join(dataDir, 'proxy', 'last-good.json'), join(configDir, 'link.json'));
    symlinkSync('/etc', join(configDir, 'etc'));
    const tree = result(await list()) as Array<{ name: string; children?: unknown[] }>;
    expect(tree.map((e) => e.name)).toEqual(['global.json', 'middlewares.json', 'notes', 'platform.json']);
    expect(tree[2]).toEqual({
      name: 'notes',
      path: join(configDir, 'notes'),
      type: 'directory',
      children: [{ name: 'readme.txt', path: join(configDir, 'notes', 'readme.txt'), type: 'file' }],
    });
  });

  it('reads any regular file inside, by a relative or an absolute path', async () => {
    expect(result(await read('global.json'))).toBe('{}\n');
    expect(result(await read(join(configDir, 'platform.json')))).toBe('[]\n');
    expect(result(await read('notes/readme.txt'))).toBe('about the proxy\n');
    expect(result(await read('./notes/../global.json'))).toBe('{}\n');
  });

  it('refuses paths outside, through a symbolic link, with a NUL byte, or not naming a regular file (field path)', async () => {
    writeFileSync(join(dataDir, 'proxy', 'outside.json'), `{"key": "${SECRET}"}`);
    const cases = [
      '../outside.json',
      'notes/../../outside.json',
      join(dataDir, 'proxy', 'outside.json'),
      '/etc/hostname',
      'link.json',
      'etc/hostname',
      '%2e%2e/outside.json',
      '..%2foutside.json',
      'global.json\0',
      '',
      '.',
      configDir,
      'notes',
      'missing.json',
    ];
    for (const path of cases) {
      const reply = await read(path);
      expect(reply.proxy?.refusedField, path).toBe('path');
      expect(reply.error, path).not.toBe('');
      expect(reply.error).not.toContain(SECRET);
      expect(reply.proxy?.resultJson).toBe('');
    }
    expect((await read('%2e%2e/outside.json')).error).toBe('no such file in the proxy configuration directory');
    expect((await read('link.json')).error).toBe('path must not go through a symbolic link');
    expect((await read('global.json\0')).error).toBe('path must not contain a NUL byte');
  });

  it('writes only the three files (field path), never through a link', async () => {
    for (const path of ['notes/readme.txt', 'other.json', '../input.json', join(dataDir, 'proxy', 'last-good.json'), 'link.json', 'etc/hostname', '%2e%2e/global.json']) {
      const reply = await write(path, '{}');
      expect(reply.proxy?.refusedField, path).toBe('path');
    }
    expect(readFileSync(join(dataDir, 'proxy', 'outside.json'), 'utf8')).toContain(SECRET);
  });
});

describe('writes', () => {
  it('render with the last applied input: the route answers', async () => {
    await applyInput([route()]);
    await waitUntil(`${host} answering`, answersPage(), 20_000);
    await waitUntil(`${platformHost} answering`, answersPage(platformHost), 20_000);
  }, 90_000);

  it('refuse content that is not what the file must hold (field content), keeping the old file', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['global.json', `{"logging": "${SECRET}"`, /^global\.json is not valid JSON/],
      ['global.json', `{"admin": {"listen": "${SECRET}"}}`, /^global\.json must not set admin/],
      ['global.json', `["${SECRET}"]`, /^global\.json must be a JSON object$/],
      ['platform.json', `{"handler": "${SECRET}"}`, /^platform\.json must be a JSON array/],
      ['platform.json', `[{"handler": "headers"}, {"name": "${SECRET}"}]`, /^platform\.json: item 2 must be a Caddy handler/],
      ['middlewares.json', `{"auth": {"handler": "${SECRET}"}}`, /^middlewares\.json: middleware "auth" must be a list/],
      ['middlewares.json', `{"auth": [{"handler": ""}]}`, /^middlewares\.json: middleware "auth", handler 1 must be a Caddy handler/],
      ['global.json', `{"x": "${'a'.repeat(512 << 10)}"}`, /larger than 512 KiB/],
    ];
    for (const [name, content, reason] of cases) {
      const before = fileText(name);
      const reply = await write(name, content);
      expect(reply.proxy?.refusedField, content.slice(0, 40)).toBe('content');
      expect(reply.error).toMatch(reason);
      expect(reply.error).not.toContain(SECRET);
      expect(fileText(name)).toBe(before);
    }
    expect(await answersPage()()).toBe(true);
  }, 60_000);

  it("refuse a handler Caddy does not know with Caddy's reason; the old file stays and the routes answer", async () => {
    const lastGood = readFileSync(manager.lastGoodPath, 'utf8');
    const reply = await write('platform.json', JSON.stringify([{ handler: `nope_${run}` }]));
    expect(reply.proxy?.refusedField).toBe('content');
    expect(reply.error).toMatch(/^Caddy refused the config \(HTTP 400\): .*nope_/);
    expect(fileText('platform.json')).toBe('[]\n');
    expect(readFileSync(manager.lastGoodPath, 'utf8')).toBe(lastGood);
    expect(await answersPage()()).toBe(true);
    expect(await answersPage(platformHost)()).toBe(true);
  }, 60_000);

  it('apply a middleware of middlewares.json that a route names; removing it while in use is refused', async () => {
    const middlewares = JSON.stringify({ tag: [{ handler: 'headers', response: { set: { 'X-Skiff-Middleware': [run] } } }] }, null, 2);
    expect(result(await write('middlewares.json', middlewares))).toEqual({});
    expect(fileText('middlewares.json')).toBe(middlewares);
    expect(statSync(join(configDir, 'middlewares.json')).mode & 0o777).toBe(0o600);
    await applyInput([route({ middlewares: ['tag'] })]);
    const answer = await get(host);
    expect(answer.status).toBe(200);
    expect(answer.headers['x-skiff-middleware']).toBe(run);

    const reply = await write('middlewares.json', '{}');
    expect(reply.proxy?.refusedField).toBe('content');
    expect(reply.error).toMatch(/unknown middleware "tag"/);
    expect(fileText('middlewares.json')).toBe(middlewares);
    expect((await get(host)).headers['x-skiff-middleware']).toBe(run);
  }, 60_000);

  it("apply the platform site's handlers before its reverse proxy", async () => {
    const handlers = [{ handler: 'headers', response: { set: { 'X-Frame-Options': ['DENY'] } } }];
    expect(result(await write(join(configDir, 'platform.json'), JSON.stringify(handlers)))).toEqual({});
    const answer = await get(platformHost);
    expect(answer.status).toBe(200);
    expect(answer.body.trim()).toBe(page);
    expect(answer.headers['x-frame-options']).toBe('DENY');
    expect((await get(host)).headers['x-frame-options']).toBeUndefined();
  }, 60_000);

  it('merge the global options into the loaded config', async () => {
    expect(result(await write('global.json', '{"logging": {"logs": {"default": {"level": "WARN"}}}}'))).toEqual({});
    expect(JSON.parse(readFileSync(manager.lastGoodPath, 'utf8')).logging).toEqual({ logs: { default: { level: 'WARN' } } });
    expect(await answersPage()()).toBe(true);
  }, 60_000);

  it('run one at a time: concurrent writes all land, the last one wins', async () => {
    const levels = ['DEBUG', 'INFO', 'ERROR'];
    const replies = await Promise.all(levels.map((level) => write('global.json', `{"logging": {"logs": {"default": {"level": "${level}"}}}}`)));
    for (const reply of replies) expect(result(reply)).toEqual({});
    expect(fileText('global.json')).toBe('{"logging": {"logs": {"default": {"level": "ERROR"}}}}');
    expect(JSON.parse(readFileSync(manager.lastGoodPath, 'utf8')).logging.logs.default.level).toBe('ERROR');
  }, 60_000);

  it('keep the middlewares and handlers in later ApplyProxyConfig renders', async () => {
    await applyInput([route({ middlewares: ['tag'] })]);
    expect((await get(host)).headers['x-skiff-middleware']).toBe(run);
    expect((await get(platformHost)).headers['x-frame-options']).toBe('DENY');
  }, 60_000);
});

describe('the dashboard', () => {
  const metrics = (path = '/metrics') => get('localhost', { port: ports.dashboard, path });

  it('is published on its host port, with host.docker.internal naming the host', () => {
    const info = inspect();
    expect(info.HostConfig.ExtraHosts).toEqual(['host.docker.internal:host-gateway']);
    expect(info.HostConfig.PortBindings['2020/tcp']).toEqual([{ HostIp: '127.0.0.1', HostPort: String(ports.dashboard) }]);
    expect(loader.dashboard()).toEqual({ enabled: false, port: ports.dashboard });
  });

  it('turned on answers the metrics on its host port, 404 elsewhere', async () => {
    expect(result(await toggle(true))).toEqual({ enabled: true, port: ports.dashboard });
    const answer = await waitUntil('the metrics', async () => {
      const res = await metrics();
      return res.status === 200 ? res : null;
    }, 10_000);
    expect(answer.body).toMatch(/^# HELP /m);
    expect((await metrics('/other')).status).toBe(404);
    expect(JSON.parse(readFileSync(join(dataDir, 'proxy', 'dashboard.json'), 'utf8'))).toEqual({ enabled: true });
    expect(await answersPage()()).toBe(true);
  }, 60_000);

  it('stays on through other writes, and turned off (flipped) stops answering', async () => {
    expect(result(await write('global.json', '{}'))).toEqual({});
    expect((await metrics()).status).toBe(200);
    expect(result(await toggle())).toEqual({ enabled: false, port: ports.dashboard });
    await waitUntil('the metrics gone', async () => {
      try {
        return (await metrics()).status !== 200;
      } catch {
        return true;
      }
    }, 10_000);
    expect(await answersPage()()).toBe(true);
  }, 60_000);

  it('cannot be turned on without a port (field enable_dashboard)', async () => {
    const noPort = new ProxyConfigLoader({ proxy: manager, settings: { httpsPort: ports.https, issuer: 'internal', acmeEmail: null, dashboardPort: 0 }, log });
    const reply = await new ProxyControl({ loader: noPort, driver, containerName, log }).handle({
      operation: ProxyOperation.PROXY_OPERATION_TOGGLE_DASHBOARD,
      path: '',
      content: '',
      enableDashboard: true,
    });
    expect(reply.proxy?.refusedField).toBe('enable_dashboard');
    expect(reply.error).toMatch(/SKIFF_PROXY_DASHBOARD_PORT is 0/);
  });
});

describe('reload and the environment', () => {
  it('reloads without restarting the container', async () => {
    const before = inspect();
    expect(result(await ask(ProxyOperation.PROXY_OPERATION_RELOAD))).toEqual({});
    const after = inspect();
    expect(after.Id).toBe(before.Id);
    expect(after.State.StartedAt).toBe(before.State.StartedAt);
    expect(await answersPage()()).toBe(true);
  }, 60_000);

  it('brings a stopped proxy back on reload', async () => {
    await manager.stop();
    try {
      docker('stop', '-t', '1', containerName);
      expect(result(await ask(ProxyOperation.PROXY_OPERATION_RELOAD))).toEqual({});
      expect(inspect().State.Running).toBe(true);
      await waitUntil(`${host} answering again`, answersPage(), 20_000);
      expect((await get(host)).headers['x-skiff-middleware']).toBe(run);
    } finally {
      await manager.start();
    }
  }, 60_000);

  it("answers the proxy container's environment", async () => {
    const env = result(await ask(ProxyOperation.PROXY_OPERATION_READ_ENV)) as Record<string, string>;
    expect(env).toMatchObject({ XDG_DATA_HOME: '/data', XDG_CONFIG_HOME: '/config' });
  });

  it('refuses an operation it does not know', async () => {
    const reply = await ask(ProxyOperation.PROXY_OPERATION_UNSPECIFIED);
    expect(reply.error).toMatch(/no operation this agent knows/);
    expect(reply.proxy?.refusedField).toBe('');
  });
});

describe('through NATS', () => {
  it("answers proxy requests on the agent's control subject", async () => {
    nc = await connect({ servers: inject('natsUrl') });
    await ensureCommandStream(nc);
    const reportServer = await startReportServer();
    const { stop } = await startTestAgent({
      serverId,
      nc,
      driver,
      journalDir: join(dataDir, 'agent'),
      reportTarget: reportServer.target,
      credential: `cred-${run}`,
      log,
      maxConcurrentDeploys: 1,
      proxy: { loader, containerName, controlTimeoutMs: 30_000 },
    });
    const send = async (proxy: ProxyRequest) => {
      return requestControl(nc!, serverId, { request: { $case: 'proxy', value: proxy } }, { timeoutMs: 10_000 });
    };
    try {
      const files = result(await send({ operation: ProxyOperation.PROXY_OPERATION_LIST_FILES, path: '', content: '' })) as Array<{ name: string }>;
      expect(files.map((f) => f.name)).toContain('middlewares.json');
      const refused = await send({ operation: ProxyOperation.PROXY_OPERATION_WRITE_FILE, path: 'global.json', content: '{"admin": {}}' });
      expect(refused.proxy?.refusedField).toBe('content');
      expect(refused.error).toMatch(/must not set admin/);
      const written = await send({ operation: ProxyOperation.PROXY_OPERATION_WRITE_FILE, path: 'global.json', content: '{"logging": {}}' });
      expect(result(written)).toEqual({});
      expect(result(await send({ operation: ProxyOperation.PROXY_OPERATION_READ_FILE, path: 'global.json', content: '' }))).toBe('{"logging": {}}');
      expect(await answersPage()()).toBe(true);
    } finally {
      await stop();
      await reportServer.stop();
    }
  }, 90_000);
});
