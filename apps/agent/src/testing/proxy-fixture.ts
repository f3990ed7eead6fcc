/**
 * What the proxy tests share: a proxy on free host ports with a web service to route to, a
 * plain route, an ApplyProxyConfig command, and the removal of what a test created on the
 * engine.
 */
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ProxyRoute } from '@skiff/domain';
import { CommandKind, timestampFromDate, type Command } from '@skiff/proto';
import { freePort } from '@skiff/testing';
import type { Logger } from 'pino';
import type { DockerDriver } from '../docker/driver.js';
import { ProxyConfigLoader } from '../proxy/config-loader.js';
import { ProxyManager } from '../proxy/proxy-manager.js';
import { removeServerChannel } from './nats.js';
import { waitUntil } from './wait.js';
import { startWebService } from './web-service.js';

export interface TestProxy {
  /** The host ports on 127.0.0.1; `dashboard` is 0 without one. */
  ports: { http: number; https: number; dashboard: number };
  manager: ProxyManager;
  loader: ProxyConfigLoader;
}

/**
 * A proxy (not started: the first load starts it) with the internal issuer on free host
 * ports, its dashboard published when asked, and web service `web` serving `page` running.
 */
export async function startTestProxy(o: {
  driver: DockerDriver;
  dataDir: string;
  log: Logger;
  containerName: string;
  volumeName: string;
  web: string;
  page: string;
  dashboard?: boolean;
}): Promise<TestProxy> {
  const ports = { http: await freePort(), https: await freePort(), dashboard: o.dashboard ? await freePort() : 0 };
  await startWebService(o.driver, o.web, o.page);
  const manager = new ProxyManager({
    driver: o.driver,
    dataDir: o.dataDir,
    log: o.log,
    ports: { http: ports.http, https: ports.https, hostIp: '127.0.0.1' },
    ...(o.dashboard ? { dashboard: { port: ports.dashboard, hostIp: '127.0.0.1' } } : {}),
    containerName: o.containerName,
    volumeName: o.volumeName,
    watchIntervalMs: 250,
  });
  const settings = { httpsPort: ports.https, issuer: 'internal' as const, acmeEmail: null, dashboardPort: ports.dashboard };
  const loader = new ProxyConfigLoader({ proxy: manager, settings, log: o.log });
  await waitUntil(`${o.web} running`, async () => (await o.driver.serviceTasks(o.web)).some((t) => t.state === 'running'), 60_000, 200);
  return { ports, manager, loader };
}

/** An enabled plain-HTTP route of `host` to `upstream`:8080, without auth or rewrites. */
export function proxyRoute(host: string, upstream: string, overrides: Partial<ProxyRoute> = {}): ProxyRoute {
  return {
    domainId: `dom-${host}`,
    host,
    path: null,
    port: 8080,
    https: false,
    certificateType: 'none',
    customCertResolver: null,
    customEntrypoint: null,
    internalPath: null,
    stripPath: false,
    middlewares: null,
    enabled: true,
    upstream,
    basicAuth: [],
    ...overrides,
  };
}

export function applyProxyConfigCommand(
  serverId: string,
  commandId: string,
  inputJson: string,
  revision: number,
  options: { deadline?: Date; workloadKey?: string } = {},
): Command {
  return {
    commandId,
    serverId,
    kind: CommandKind.COMMAND_KIND_APPLY_PROXY_CONFIG,
    workloadKey: options.workloadKey ?? `proxy:${serverId}`,
    deadline: timestampFromDate(options.deadline ?? new Date(Date.now() + 60_000)),
    createdAt: timestampFromDate(new Date()),
    payload: { $case: 'applyProxyConfig', value: { inputJson, revision: String(revision) } },
  };
}

export interface ProxyTestObjects {
  containerName: string;
  volumeName: string;
  services: string[];
  dataDir: string;
  /** The NATS channel of a test server, removed and closed too. */
  channel?: { nc: NatsConnection | undefined; serverId: string };
}

/** Removes what a proxy test created; throws listing what could not be removed (already gone is fine). */
export async function removeProxyTestObjects(objects: ProxyTestObjects): Promise<void> {
  const problems: string[] = [];
  const attempt = (what: string, args: string[]) => {
    try {
      execFileSync('/usr/bin/docker', args, { encoding: 'utf8' });
    } catch (err) {
      if (!/No such/i.test(String(err))) problems.push(`${what}: ${String(err)}`);
    }
  };
  attempt('container', ['rm', '-f', objects.containerName]);
  attempt('volume', ['volume', 'rm', objects.volumeName]);
  for (const service of objects.services) attempt('service', ['service', 'rm', service]);
  const nc = objects.channel?.nc;
  if (nc) {
    const { serverId } = objects.channel!;
    await removeServerChannel(nc, serverId).catch((err: unknown) => problems.push(`channel ${serverId}: ${String(err)}`));
    await nc.close();
  }
  rmSync(objects.dataDir, { recursive: true, force: true });
  if (problems.length) throw new Error(`clean-up left objects behind:\n${problems.join('\n')}`);
}
