/**
 * The proxy runtime against the real engine and the real caddy:2 image: a busybox web
 * service on skiff-network reached through the proxy's published port by its Host header.
 * Every object here has a name of this run and is removed at the end (skiff-network stays).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLATFORM_NETWORK } from '@skiff/domain';
import { freePort } from '@skiff/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { waitUntil } from '../testing/wait.js';
import { ProxyManager } from './proxy-manager.js';
import { removeProxyTestObjects } from '../testing/proxy-fixture.js';
import { startWebService } from '../testing/web-service.js';

const DOCKER = '/usr/bin/docker';
const run = randomBytes(3).toString('hex');
const web = `proxy-web-${run}`;
const page = `hello from ${run}`;
const host = `site-${run}.test`;
const other = `other-${run}.test`;
const containerName = `skiff-proxy-test-${run}`;
const volumeName = `skiff-proxy-data-test-${run}`;
const driver = new DockerodeDriver();
const dataDir = mkdtempSync(join(tmpdir(), 'skiff-proxy-'));
let httpPort = 0;
let manager: ProxyManager;

const docker = (...args: string[]) => execFileSync(DOCKER, args, { encoding: 'utf8' }).trim();

/** A config routing each host to the web service (written by hand: the renderer is elsewhere). */
function routes(hosts: string[], handler: Record<string, unknown> = { handler: 'reverse_proxy', upstreams: [{ dial: `${web}:8080` }] }) {
  return {
    apps: {
      http: {
        servers: {
          main: {
            listen: [':80'],
            automatic_https: { disable: true },
            routes: [{ match: [{ host: hosts }], handle: [handler], terminal: true }],
          },
        },
      },
    },
  };
}

function get(hostHeader: string, path = '/'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: httpPort, path, headers: { Host: hostHeader }, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const answersPage = (hostHeader: string) => async () => {
  const res = await get(hostHeader);
  return res.status === 200 && res.body.trim() === page;
};

const containerId = () => docker('inspect', '--format', '{{.Id}}', containerName);

beforeAll(async () => {
  httpPort = await freePort();
  const httpsPort = await freePort();
  await startWebService(driver, web, page);
  manager = new ProxyManager({
    driver,
    dataDir,
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    ports: { http: httpPort, https: httpsPort, hostIp: '127.0.0.1' },
    containerName,
    volumeName,
    watchIntervalMs: 250,
  });
  await waitUntil(`${web} running`, async () => (await driver.serviceTasks(web)).some((t) => t.state === 'running'), 60_000, 200);
  await manager.start();
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await removeProxyTestObjects({ containerName, volumeName, services: [web], dataDir });
}, 60_000);

describe('ProxyManager', () => {
  it('runs skiff-proxy as described: labels, network, ports, restart policy, init, data volume', () => {
    const info = JSON.parse(docker('inspect', containerName))[0];
    expect(info.State.Running).toBe(true);
    expect(info.Config.Labels).toMatchObject({ 'skiff.managed': 'true', 'skiff.kind': 'proxy' });
    expect(info.HostConfig.RestartPolicy.Name).toBe('unless-stopped');
    expect(info.HostConfig.Init).toBe(true);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([PLATFORM_NETWORK]);
    expect(Object.keys(info.HostConfig.PortBindings).sort()).toEqual(['443/tcp', '443/udp', '80/tcp']);
    expect(info.HostConfig.PortBindings['80/tcp'][0].HostPort).toBe(String(httpPort));
    expect(info.Mounts.find((m: { Type: string; Name?: string }) => m.Type === 'volume')?.Name).toBe(volumeName);
    expect(statSync(join(dataDir, 'proxy', 'run')).mode & 0o777).toBe(0o700);
  });

  it('routes a Host header through the published port to the service on skiff-network', async () => {
    expect(await manager.apply(routes([host]))).toEqual({ ok: true });
    await waitUntil(`${host} answering through the proxy`, answersPage(host), 20_000);
  }, 60_000);

  it('keeps the accepted config as last-good.json, 0600, with the admin API on the socket only', () => {
    const file = manager.lastGoodPath;
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    expect(saved.admin.listen).toBe('unix//run/caddy/admin.sock');
    expect(saved.apps.http.servers.main.routes[0].match[0].host).toEqual([host]);
  });

  it('refuses an invalid config with Caddy reason; the previous route keeps answering', async () => {
    const before = readFileSync(manager.lastGoodPath, 'utf8');
    const result = await manager.apply(routes([host, other], { handler: 'no_such_handler' }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.status).toBe(400);
    expect(result.reason).toMatch(/no_such_handler/);
    expect(await answersPage(host)()).toBe(true);
    expect(readFileSync(manager.lastGoodPath, 'utf8')).toBe(before);
  }, 60_000);

  it('applies a change without restarting the container', async () => {
    const id = containerId();
    const started = docker('inspect', '--format', '{{.State.StartedAt}}', containerName);
    expect(await manager.apply(routes([host, other]))).toEqual({ ok: true });
    await waitUntil(`${other} answering`, answersPage(other), 20_000);
    expect(containerId()).toBe(id);
    expect(docker('inspect', '--format', '{{.State.StartedAt}}', containerName)).toBe(started);
  }, 60_000);

  it('brings a removed container back with the last good config, without a new apply', async () => {
    const id = containerId();
    const removedAt = Date.now();
    docker('rm', '-f', containerName);
    await waitUntil('the route answering again', async () => (await answersPage(other)()) && containerId() !== id, 20_000, 100);
    expect(Date.now() - removedAt).toBeLessThan(15_000);
    expect(await answersPage(host)()).toBe(true);
  }, 60_000);

  it('brings a stopped container back', async () => {
    docker('stop', '-t', '1', containerName);
    await waitUntil('the route answering again', answersPage(host), 20_000, 100);
    expect(docker('inspect', '--format', '{{.State.Running}}', containerName)).toBe('true');
  }, 60_000);

  it('an apply finding no proxy brings it back and loads within the deadline', async () => {
    await manager.stop();
    try {
      docker('rm', '-f', containerName);
      expect(await manager.apply(routes([host]), { timeoutMs: 30_000 })).toEqual({ ok: true });
      expect(await answersPage(host)()).toBe(true);
      expect(await answersPage(other)()).toBe(false);
    } finally {
      await manager.start();
    }
  }, 60_000);

  it('has no admin API on any TCP port of the container, whatever admin block the config asks for', async () => {
    expect(await manager.apply({ ...routes([host]), admin: { listen: '0.0.0.0:2019' } })).toEqual({ ok: true });
    expect(JSON.parse(readFileSync(manager.lastGoodPath, 'utf8')).admin.listen).toBe('unix//run/caddy/admin.sock');
    const info = JSON.parse(docker('inspect', containerName))[0];
    expect(Object.keys(info.NetworkSettings.Ports ?? {}).filter((p) => info.NetworkSettings.Ports[p]).sort()).toEqual(['443/tcp', '443/udp', '80/tcp']);
    const listening: Array<{ address: string; port: number }> = [];
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      const lines = docker('exec', containerName, 'cat', table).split('\n').slice(1);
      for (const line of lines) {
        const fields = line.trim().split(/\s+/);
        if (fields[3] !== '0A') continue; // LISTEN
        const [address, port] = fields[1]!.split(':') as [string, string];
        listening.push({ address, port: parseInt(port, 16) });
      }
    }
    // Docker's embedded DNS listens on 127.0.0.11 in every container on a user network.
    const caddy = listening.filter((l) => l.address !== '0B00007F');
    expect(caddy.length).toBeGreaterThan(0);
    expect(caddy.every((l) => l.port === 80 || l.port === 443)).toBe(true);
    // Through the published port, /config/ is a site route, not the admin API.
    for (const name of ['localhost', host]) {
      expect((await get(name, '/config/')).body).not.toContain('unix//run/caddy');
    }
  }, 60_000);
});
