import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { freePort, spawnOwned, startDedicatedNats, waitFor } from '@skiff/testing';
import { expect } from 'vitest';
import type { PlatformOptions } from '../compose-root.js';
import { startTestPlatform, type TestPlatform } from './harness.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const agentMain = fileURLToPath(new URL('../../../agent/src/main.ts', import.meta.url));
// The control plane never talks to Docker; tests look and clean up with the engine's own CLI.
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

export const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) =>
    execFile(dockerCli, args, (err, stdout) => resolve({ ok: !err, out: String(stdout).trim() })),
  );

export { freePort };

/** The page a service serves on a host port, or null while nothing answers. */
export const page = async (port: number) => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? (await res.text()).trim() : null;
  } catch {
    return null;
  }
};

/** busybox's HTTP server serving `$PAGE`, on port 8080 published on the host's `port`. */
export const webServerSettings = (page: string, port: number) => ({
  env: `PAGE=${page}`,
  command: 'sh',
  args: ['-c', 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www'],
  endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
});

/**
 * The address `host-gateway` stands for in containers, where the proxy container reaches the
 * host as host.docker.internal. Asked of the engine itself, by a container given that name:
 * the default bridge's `.IPAM.Config` shows no `Gateway` on some engines (Debian's 20.10),
 * and `--host-gateway-ip` may point elsewhere.
 */
async function dockerHostGateway(): Promise<string> {
  const res = await docker(['run', '--rm', '--add-host', 'skiff-host-probe:host-gateway', 'busybox:latest', 'cat', '/etc/hosts']);
  const line = res.out.split('\n').find((l) => /\sskiff-host-probe(\s|$)/.test(l));
  const gateway = line?.trim().split(/\s+/)[0];
  if (!res.ok || !gateway || !/^\d+\.\d+\.\d+\.\d+$/.test(gateway)) {
    throw new Error(`the engine gave no IPv4 address for host-gateway (/etc/hosts of a probe container: ${res.out})`);
  }
  return gateway;
}

export interface TestStackOptions {
  /**
   * Also serve the API over HTTP where the proxy container reaches the host (the default
   * bridge's gateway, i.e. host.docker.internal), and make it the platform domain's upstream.
   */
  servePlatformDomain?: boolean;
  /** Rollback images kept, and the crash loop callback of the control plane. */
  rollback?: PlatformOptions['rollback'];
  /** node flags of the agent's process before tsx (e.g. AGENT_CMD's of tools/lib/setup.sh, to measure its memory as run). */
  agentNodeFlags?: string[];
}

/**
 * The whole single host for an end-to-end test file: the API on a real Postgres, the outbox
 * relay on a NATS of this file alone, the report server over gRPC, the local agent as its own
 * process and the Docker Engine's swarm. Services the test names in `services` are removed
 * by `close()`, even after a failure.
 */
export async function startTestStack(label: string, options: TestStackOptions = {}) {
  const run = randomBytes(3).toString('hex');
  const credential = `e2e-${randomBytes(16).toString('hex')}`;
  const api = options.servePlatformDomain ? { host: await dockerHostGateway(), port: await freePort() } : null;
  const nats = await startDedicatedNats();
  const t: TestPlatform = await startTestPlatform({
    nats: { url: nats.url, pollMs: 200 },
    grpc: { host: '127.0.0.1', port: 0 },
    localAgentCredential: credential,
    rollback: options.rollback,
    ...(api ? { platformUpstream: `host.docker.internal:${api.port}` } : {}),
  }).catch(async (err: unknown) => {
    await nats.stop();
    throw err;
  });
  let apiServer: Server | null = null;
  if (api) {
    apiServer = serve({ fetch: t.platform.app.fetch, hostname: api.host, port: api.port }) as Server;
    await once(apiServer, 'listening');
  }
  const agentDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-agent-'));
  // This stack's own reverse proxy (stacks share the engine): removed by close().
  const proxy = { container: `skiff-proxy-e2e-${run}`, httpPort: await freePort(), httpsPort: await freePort(), dashboardPort: await freePort() };
  let agentOutput = '';
  const agent: ChildProcess = spawnOwned(process.execPath, [...(options.agentNodeFlags ?? []), '--import', 'tsx', agentMain], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SKIFF_SERVER_ID: 'local',
      SKIFF_NATS_URL: nats.url,
      SKIFF_CONTROL_PLANE_GRPC: `127.0.0.1:${t.platform.grpcPort}`,
      SKIFF_AGENT_CREDENTIAL: credential,
      SKIFF_COMMAND_KEY: t.platform.commandKey,
      SKIFF_AGENT_DATA_DIR: agentDir,
      SKIFF_PROXY_CONTAINER: proxy.container,
      SKIFF_PROXY_HTTP_PORT: String(proxy.httpPort),
      SKIFF_PROXY_HTTPS_PORT: String(proxy.httpsPort),
      SKIFF_PROXY_BIND: '127.0.0.1',
      SKIFF_PROXY_DASHBOARD_PORT: String(proxy.dashboardPort),
      SKIFF_PROXY_ISSUER: 'internal',
      // Debug lines too: the secret watch scans all of the agent's output.
      SKIFF_LOG_LEVEL: 'debug',
      // Test stacks share this machine's engine: no build cap on its BuildKit cgroup (build/build-cap.ts).
      SKIFF_BUILD_CPUS: '0',
      SKIFF_BUILD_MEMORY: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agent.stdout?.setEncoding('utf8').on('data', (c: string) => (agentOutput += c));
  agent.stderr?.setEncoding('utf8').on('data', (c: string) => (agentOutput += c));
  const environmentId: string = (await t.call('project.create', { name: `e2e-${label}-${run}` })).body.environments[0].environmentId;
  const services: string[] = [];
  const tail = () => agentOutput.slice(-2000);
  t.watch.source("the agent's output", () => agentOutput);

  return {
    t,
    run,
    environmentId,
    services,
    /** The agent's proxy: its container and the host ports (on 127.0.0.1) of its HTTP and HTTPS listeners and its dashboard. */
    proxy,
    /** The agent's data directory (its proxy's files are under `proxy/`). */
    agentDir,
    /** Where the API answers over HTTP with servePlatformDomain (the platform domain's upstream); null otherwise. */
    api,
    agentOutput: () => agentOutput,
    /** The agent process's id (its memory is read from /proc). */
    agentPid: agent.pid!,

    /** A container application named `<name>-<run>`, removed from the swarm by close(). */
    async containerApplication(name: string, provider: { containerImage: string; username?: string; password?: string; registryUrl?: string }) {
      const app = (await t.call('application.create', { name, appName: `${name}-${run}`, environmentId, sourceType: 'container' })).body;
      services.push(app.appName);
      const saved = await t.call('application.saveContainerProvider', {
        applicationId: app.applicationId,
        username: null,
        password: null,
        registryUrl: null,
        ...provider,
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
      return app as { applicationId: string; appName: string };
    },

    /** Queues a deploy and waits until the deployment ends; answers it. */
    async deployAndWait(applicationId: string, op: 'application.deploy' | 'application.redeploy' = 'application.deploy') {
      const queued = await t.call(op, { applicationId });
      expect(queued.status, JSON.stringify(queued.body)).toBe(200);
      const deploymentId = queued.body.deploymentId as string;
      return waitFor(
        async () => {
          const all = (await t.call('deployment.all', { applicationId })).body as { deploymentId: string; status: string }[];
          const mine = all.find((d) => d.deploymentId === deploymentId);
          return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
        },
        { timeoutMs: 120_000, intervalMs: 250, what: () => `deployment ${deploymentId} to end (agent output: ${tail()})` },
      );
    },

    async close() {
      for (const name of services) await docker(['service', 'rm', name]);
      if (agent.exitCode === null) {
        const exited = new Promise((resolve) => agent.once('exit', resolve));
        agent.kill('SIGTERM');
        await exited;
      }
      await docker(['rm', '-f', proxy.container]);
      await docker(['volume', 'rm', `${proxy.container}-data`]);
      if (apiServer) {
        const closed = new Promise((resolve) => apiServer!.close(resolve));
        apiServer.closeAllConnections();
        await closed;
      }
      try {
        await t.close();
      } finally {
        await nats.stop();
        rmSync(agentDir, { recursive: true, force: true });
      }
    },
  };
}

export type TestStack = Awaited<ReturnType<typeof startTestStack>>;
