/**
 * ApplyProxyConfig against the real engine and the real caddy:2 image: a busybox web service
 * on skiff-network reached through the proxy's published ports by its Host header. The proxy
 * container, its volume and the service have names of this run and are removed at the end.
 * (The configuration files and proxy requests: control/proxy-control.int.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type ProxyRoute, type ServerProxyInput } from '@skiff/domain';
import { CommandStatus, type Command } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { appliedRevisionPath, readAppliedRevision } from '../proxy/applied-revision.js';
import type { ProxyConfigLoader } from '../proxy/config-loader.js';
import type { ProxyManager } from '../proxy/proxy-manager.js';
import { ensureCommandStream, publishCommand } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';
import { applyProxyConfigHandler } from './apply-proxy-config.js';
import type { CommandContext, CommandHandler } from '../pipeline/handler.js';
import { applyProxyConfigCommand, proxyRoute, removeProxyTestObjects, startTestProxy } from '../testing/proxy-fixture.js';
import { capturedLog } from '../testing/captured-log.js';

const DOCKER = '/usr/bin/docker';
const run = randomBytes(3).toString('hex');
const serverId = `srv-apc-${run}`;
const web = `apc-web-${run}`;
const page = `hello from ${run}`;
const host = `site-${run}.test`;
const containerName = `skiff-proxy-apc-${run}`;
const volumeName = `${containerName}-data`;
// bcrypt (cost 4) of the password below; test data only.
const USER = { username: 'carol', password: 'tide-pool-42', passwordHash: '$2b$04$DAWzBN1NBx/hB7HW3SwoZ.yD382hXwoeZo1f.Fxqtbpdx25HIh5sy' };
const driver = new DockerodeDriver();
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-apc-'));
const { log, text: logged } = capturedLog();
const ports = { http: 0, https: 0 };
let manager: ProxyManager;
let loader: ProxyConfigLoader;
let handler: CommandHandler;
let commands = 0;
let nc: NatsConnection | undefined;

const docker = (...args: string[]) => execFileSync(DOCKER, args, { encoding: 'utf8' }).trim();

const route = (overrides: Partial<ProxyRoute> = {}): ProxyRoute => proxyRoute(host, web, { domainId: `dom-${run}`, ...overrides });

function input(routes: ProxyRoute[], more: Partial<Omit<ServerProxyInput, 'options'>> = {}): string {
  return JSON.stringify({ routes, certificates: [], platform: null, middlewares: {}, ...more });
}

const command = (inputJson: string, revision: number, options: { deadline?: Date; workloadKey?: string } = {}): Command =>
  applyProxyConfigCommand(serverId, `cmd-apc-${run}-${++commands}`, inputJson, revision, options);

function context(cmd: Command): CommandContext {
  return { command: cmd, signal: new AbortController().signal, deadline: new Date(Date.now() + 60_000), resumed: false, log };
}

async function apply(inputJson: string, revision: number) {
  const cmd = command(inputJson, revision);
  expect(handler.validate(cmd)).toBeNull();
  return handler.run(context(cmd));
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function get(options: { tls?: boolean; hostHeader?: string; auth?: string; path?: string } = {}): Promise<Answer> {
  const name = options.hostHeader ?? host;
  const request = options.tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: options.tls ? ports.https : ports.http,
        path: options.path ?? '/',
        headers: { Host: name, ...(options.auth ? { Authorization: `Basic ${Buffer.from(options.auth).toString('base64')}` } : {}) },
        timeout: 3000,
        // A fresh connection each time: Caddy closes idle kept-alive ones when it loads a config.
        agent: false,
        ...(options.tls ? { servername: name, rejectUnauthorized: false } : {}),
      },
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

const answersPage = (options: Parameters<typeof get>[0] = {}) => async () => {
  const res = await get(options);
  return res.status === 200 && res.body.trim() === page;
};

const SUCCEEDED = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };

beforeAll(async () => {
  const proxy = await startTestProxy({ driver, dataDir, log, containerName, volumeName, web, page });
  Object.assign(ports, proxy.ports);
  ({ manager, loader } = proxy);
  handler = applyProxyConfigHandler({ serverId, loader });
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await removeProxyTestObjects({ containerName, volumeName, services: [web], dataDir, channel: { nc, serverId } });
}, 60_000);

describe('ApplyProxyConfig', () => {
  it('refuses a command it cannot run: malformed JSON (without quoting it), another workload key, a wrong shape', () => {
    const secret = `{"routes": [], "privateKey": "SECRET-${run}"`;
    const reason = handler.validate(command(secret, 1));
    expect(reason).toMatch(/^input_json is not valid JSON/);
    expect(reason).not.toContain('SECRET');
    expect(handler.validate(command(input([]), 1, { workloadKey: `proxy:other-${run}` }))).toBe(`the workload key of a proxy config must be proxy:${serverId}`);
    expect(handler.validate(command('[]', 1))).toBe('input_json must be a JSON object');
    expect(handler.validate(command(JSON.stringify({ routes: {}, certificates: [], middlewares: {} }), 1))).toBe('input_json.routes must be an array of objects');
  });

  it('starts the proxy on the first config and routes the host to the service', async () => {
    expect(existsSync(manager.lastGoodPath)).toBe(false);
    expect(await apply(input([route()]), 1)).toEqual(SUCCEEDED);
    await waitUntil(`${host} answering through the proxy`, answersPage(), 20_000);
    expect(docker('inspect', '--format', '{{.State.Running}}', containerName)).toBe('true');
    expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(1n);
    expect((await get({ hostHeader: `unknown-${run}.test` })).body.trim()).not.toBe(page);
  }, 90_000);

  it('keeps the applied input as input.json (0600) and creates the configuration files', () => {
    const kept = join(dataDir, 'proxy', 'input.json');
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(kept, 'utf8')).routes[0].host).toBe(host);
    expect(statSync(join(dataDir, 'proxy', 'config')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dataDir, 'proxy', 'config', 'middlewares.json'), 'utf8')).toBe('{}\n');
  });

  it('puts basic auth in front of the route: 401 without credentials, the page with them', async () => {
    expect(await apply(input([route({ basicAuth: [USER] })]), 2)).toEqual(SUCCEEDED);
    const refused = await get();
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await get({ auth: `${USER.username}:wrong` })).status).toBe(401);
    expect(await answersPage({ auth: `${USER.username}:${USER.password}` })()).toBe(true);
  }, 60_000);

  it('skips an older (or the same) revision as succeeded, changing nothing', async () => {
    const before = readFileSync(manager.lastGoodPath, 'utf8');
    expect(await apply(input([route()]), 1)).toEqual(SUCCEEDED);
    expect(await apply(input([route()]), 2)).toEqual(SUCCEEDED);
    expect(logged()).toContain('superseded');
    expect(readFileSync(manager.lastGoodPath, 'utf8')).toBe(before);
    expect((await get()).status).toBe(401);
  }, 60_000);

  it('fails with the renderer reason on an input it refuses; the previous route keeps answering', async () => {
    const outcome = await apply(input([route({ upstream: 'not a service!' })]), 3);
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toContain('is not a service name');
    expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(2n);
    expect((await get()).status).toBe(401);
    expect(await answersPage({ auth: `${USER.username}:${USER.password}` })()).toBe(true);
  }, 60_000);

  it("fails with Caddy's reason on a config Caddy refuses; the previous route keeps answering", async () => {
    const inputFile = join(dataDir, 'proxy', 'input.json');
    const keptInput = readFileSync(inputFile, 'utf8');
    // The shared middlewares come from middlewares.json; the input's are not taken.
    const file = join(dataDir, 'proxy', 'config', 'middlewares.json');
    writeFileSync(file, JSON.stringify({ broken: [{ handler: `no_such_handler_${run}` }] }));
    try {
      const outcome = await apply(input([route({ middlewares: ['broken'] })], { middlewares: { broken: [{ handler: 'headers' }] } }), 3);
      expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
      expect(outcome.reason).toMatch(/^Caddy refused the config \(HTTP 400\): .*no_such_handler/);
      expect((await get()).status).toBe(401);
      expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(2n);
      expect(readFileSync(inputFile, 'utf8')).toBe(keptInput);
    } finally {
      writeFileSync(file, '{}\n');
    }
  }, 60_000);

  it('renders with the middlewares of middlewares.json', async () => {
    const file = join(dataDir, 'proxy', 'config', 'middlewares.json');
    writeFileSync(file, JSON.stringify({ tag: [{ handler: 'headers', response: { set: { 'X-Skiff-Test': [run] } } }] }));
    try {
      expect(await apply(input([route({ middlewares: ['tag'] })]), 3)).toEqual(SUCCEEDED);
      const answer = await get();
      expect(answer.status).toBe(200);
      expect(answer.headers['x-skiff-test']).toBe(run);
    } finally {
      writeFileSync(file, '{}\n');
    }
  }, 60_000);

  it('fails naming the file when a configuration file on disk is broken; nothing changes', async () => {
    const file = join(dataDir, 'proxy', 'config', 'global.json');
    writeFileSync(file, '{"admin": {}}');
    try {
      const outcome = await apply(input([route()]), 4);
      expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'global.json must not set admin (Skiff manages the admin API)' });
      expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(3n);
      expect((await get()).headers['x-skiff-test']).toBe(run);
    } finally {
      writeFileSync(file, '{}\n');
    }
  }, 60_000);

  it('serves an https route with a certificate of the internal issuer on the published HTTPS port, redirecting HTTP there', async () => {
    expect(await apply(input([route({ https: true, certificateType: 'acme' })]), 4)).toEqual(SUCCEEDED);
    await waitUntil(`${host} answering over https`, answersPage({ tls: true }), 30_000, 250);
    const redirect = await get();
    expect(redirect.status).toBe(308);
    expect(redirect.headers.location).toBe(`https://${host}:${ports.https}/`);
  }, 90_000);

  it('applies the same revision again when its input was not kept (applied by an agent before input.json)', async () => {
    const kept = join(dataDir, 'proxy', 'input.json');
    rmSync(kept);
    expect(await apply(input([route({ https: true, certificateType: 'acme' })]), 4)).toEqual(SUCCEEDED);
    expect(JSON.parse(readFileSync(kept, 'utf8')).routes[0].https).toBe(true);
    expect(await apply(input([route()]), 3)).toEqual(SUCCEEDED);
    expect(JSON.parse(readFileSync(kept, 'utf8')).routes[0].https).toBe(true);
  }, 60_000);

  it('fails without loading when the deadline has passed', async () => {
    const cmd = command(input([route()]), 5, { deadline: new Date(Date.now() - 1000) });
    const outcome = await handler.run({ ...context(cmd), deadline: new Date(Date.now() - 1000) });
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the deadline passed before the config could be loaded' });
    expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(4n);
  });

  it('routes a host in any letter case: a mapped host, a host of a route listing more than 100, a wildcard; an unknown host 404s', async () => {
    // Hosts differing only in upstream share one route with a map on the host (the others' upstream does not exist:
    // a request there would retry for 10 s); 120 alike hosts one route matching 120.
    const others = [0, 1, 2].map((i) => proxyRoute(`other-${i}-${run}.test`, `nothing-${run}`, { domainId: `other-${i}-${run}` }));
    const big = Array.from({ length: 120 }, (_, i) =>
      proxyRoute(`big-${String(i).padStart(3, '0')}-${run}.test`, web, { domainId: `big-${i}-${run}`, path: '/big/', stripPath: true }),
    );
    const wildcard = proxyRoute(`*.wild-${run}.test`, web, { domainId: `wild-${run}`, path: '/wild/', stripPath: true });
    expect(await apply(input([route(), ...others, ...big, wildcard]), 6)).toEqual(SUCCEEDED);
    await waitUntil(`${host} answering through the proxy`, answersPage(), 20_000);
    expect(await answersPage({ hostHeader: host.toUpperCase() })()).toBe(true);
    expect(await answersPage({ hostHeader: `Site-${run}.Test` })()).toBe(true);
    expect(await answersPage({ hostHeader: `big-077-${run}.test`, path: '/big/' })()).toBe(true);
    expect(await answersPage({ hostHeader: `Big-077-${run}.TEST`, path: '/big/' })()).toBe(true);
    expect(await answersPage({ hostHeader: `A.Wild-${run}.TEST`, path: '/wild/' })()).toBe(true);
    expect((await get({ hostHeader: `Unknown-${run}.test` })).status).toBe(404);
    expect((await get({ hostHeader: `BIG-077-${run}.test.evil` })).status).toBe(404);
  }, 60_000);

  it('never logs the input or the rendered config', () => {
    expect(logged()).not.toContain(USER.passwordHash);
    expect(logged()).not.toContain(Buffer.from(USER.passwordHash).toString('base64'));
    expect(logged()).not.toContain('SECRET');
    expect(logged()).not.toContain('reverse_proxy');
  });

  it("runs through the agent's command path: NATS, intake (refusing malformed JSON), runner, reported results", async () => {
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
      proxy: { loader, containerName },
    });
    try {
      const malformed = command('{"routes": [', 10);
      const applied = command(input([route()]), 10);
      await publishCommand(nc, malformed);
      await publishCommand(nc, applied);
      const resultOf = (id: string) => () => reportServer.results.find((r) => r.commandId === id);
      expect(await waitUntil('the malformed command refused', resultOf(malformed.commandId), 30_000)).toMatchObject({
        status: CommandStatus.COMMAND_STATUS_REJECTED,
        reason: expect.stringMatching(/^input_json is not valid JSON/),
      });
      expect(await waitUntil('the config applied', resultOf(applied.commandId), 30_000)).toMatchObject({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
      await waitUntil(`${host} answering over plain HTTP again`, answersPage(), 20_000);
      expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(10n);
    } finally {
      await stop();
      await reportServer.stop();
    }
  }, 90_000);
});
