/**
 * ApplyProxyConfig when the proxy cannot take the config yet, against the real engine and the
 * real caddy:2 image: its HTTP host port is held by another program (a web server installed
 * before Skiff), so the engine cannot start the proxy container. The command keeps trying and
 * applies the config once the port is free; it fails, naming the engine's reason, only at its
 * deadline.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandStatus, type Command } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import type { CommandContext, CommandHandler } from '../pipeline/handler.js';
import { appliedRevisionPath, readAppliedRevision } from '../proxy/applied-revision.js';
import type { ProxyManager } from '../proxy/proxy-manager.js';
import { applyProxyConfigCommand, proxyRoute, removeProxyTestObjects, startTestProxy } from '../testing/proxy-fixture.js';
import { waitUntil } from '../testing/wait.js';
import { applyProxyConfigHandler } from './apply-proxy-config.js';
import { capturedLog } from '../testing/captured-log.js';

const run = randomBytes(3).toString('hex');
const serverId = `srv-apr-${run}`;
const web = `apr-web-${run}`;
const page = `hello from ${run}`;
const host = `site-${run}.test`;
const containerName = `skiff-proxy-apr-${run}`;
const volumeName = `${containerName}-data`;
const driver = new DockerodeDriver();
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-apr-'));
const { log, text: logged } = capturedLog();
const ports = { http: 0, https: 0 };
let manager: ProxyManager;
let handler: CommandHandler;
let holder: Server | null = null;
let commands = 0;

const inputJson = JSON.stringify({ routes: [proxyRoute(host, web)], certificates: [], platform: null, middlewares: {} });

function runCommand(revision: number, deadline: Date) {
  const command: Command = applyProxyConfigCommand(serverId, `cmd-apr-${run}-${++commands}`, inputJson, revision, { deadline });
  expect(handler.validate(command)).toBeNull();
  const context: CommandContext = { command, signal: new AbortController().signal, deadline, resumed: false, log };
  return handler.run(context);
}

/** Another program listening on the proxy's HTTP host port. */
async function holdHttpPort(): Promise<Server> {
  const server = createServer((socket) => socket.destroy());
  server.listen(ports.http, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

function pageAnswered(): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port: ports.http, path: '/', headers: { Host: host }, agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve(res.statusCode === 200 && body.trim() === page));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

beforeAll(async () => {
  const proxy = await startTestProxy({ driver, dataDir, log, containerName, volumeName, web, page });
  Object.assign(ports, proxy.ports);
  manager = proxy.manager;
  handler = applyProxyConfigHandler({ serverId, loader: proxy.loader, timeoutMs: 5_000, retryDelaysMs: [200, 500] });
}, 120_000);

afterAll(async () => {
  if (holder) holder.close();
  await manager?.stop();
  await removeProxyTestObjects({ containerName, volumeName, services: [web], dataDir });
}, 60_000);

describe('ApplyProxyConfig when the proxy cannot take it yet', () => {
  it('fails at its deadline, naming why the proxy could not be brought up, while the port stays taken', async () => {
    holder = await holdHttpPort();
    const outcome = await runCommand(1, new Date(Date.now() + 4_000));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^the proxy could not be brought up: .*(address already in use|port is already allocated)/);
    expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBeNull();
    // Logged once, not at every try.
    expect(logged().match(/the proxy could not take the config; trying again/g)).toHaveLength(1);
  }, 30_000);

  it('keeps trying, and applies the config once the port is free: the host is served', async () => {
    const outcome = runCommand(2, new Date(Date.now() + 60_000));
    const before = logged().length;
    await waitUntil('a failed try', () => logged().slice(before).includes('the proxy could not take the config'), 20_000, 50);
    holder!.close();
    await once(holder!, 'close');
    holder = null;
    expect(await outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    expect(readAppliedRevision(appliedRevisionPath(manager.lastGoodPath))).toBe(2n);
    await waitUntil(`${host} answering through the proxy`, pageAnswered, 20_000);
  }, 90_000);
});
