// An application's life after its deploy, end to end: stop, start, reload and delete through
// the API on a real Postgres, the outbox relay on a NATS of this file alone, the report server
// over gRPC, the agent as its own process, and the Docker Engine's swarm. Each step is checked
// by an HTTP request to the service's host port and by the engine itself.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDedicatedNats, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from './testing/harness.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const agentMain = fileURLToPath(new URL('../../agent/src/main.ts', import.meta.url));
const run = randomBytes(3).toString('hex');
const CREDENTIAL = `e2e-${randomBytes(16).toString('hex')}`;
// The control plane never talks to Docker; the test looks and cleans up with the engine's own CLI.
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) =>
    execFile(dockerCli, args, (err, stdout) => resolve({ ok: !err, out: String(stdout).trim() })),
  );

let t: TestPlatform;
let nats: Awaited<ReturnType<typeof startDedicatedNats>>;
let agent: ChildProcess;
let agentOutput = '';
let agentDir: string;
let env: string;
const services: string[] = [];

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  nats = await startDedicatedNats();
  t = await startTestPlatform({
    nats: { url: nats.url, pollMs: 200 },
    grpc: { host: '127.0.0.1', port: 0 },
    localAgentCredential: CREDENTIAL,
  });
  agentDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-agent-'));
  agent = spawn(process.execPath, ['--import', 'tsx', agentMain], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SKIFF_SERVER_ID: 'local',
      SKIFF_NATS_URL: nats.url,
      SKIFF_CONTROL_PLANE_GRPC: `127.0.0.1:${t.platform.grpcPort}`,
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: agentDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agent.stdout?.setEncoding('utf8').on('data', (c: string) => (agentOutput += c));
  agent.stderr?.setEncoding('utf8').on('data', (c: string) => (agentOutput += c));
  env = (await t.call('project.create', { name: `e2e-life-${run}` })).body.environments[0].environmentId;
}, 120_000);

afterAll(async () => {
  for (const name of services) await docker(['service', 'rm', name]);
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent.once('exit', resolve));
    agent.kill('SIGTERM');
    await exited;
  }
  await t?.close();
  await nats?.stop();
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

const page = async (port: number) => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? (await res.text()).trim() : null;
  } catch {
    return null;
  }
};

/** Waits until the newest command of `kind` for the application has a result; answers its row. */
const commandResult = (applicationId: string, kind: string) =>
  waitFor(
    async () => {
      const row = await t.db
        .selectFrom('commands')
        .select(['id', 'status', 'resultReason'])
        .where('workloadKey', '=', `application:${applicationId}`)
        .where('kind', '=', kind)
        .orderBy('position', 'desc')
        .executeTakeFirst();
      return row && (row.status === 'done' || row.status === 'failed') ? row : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `the result of ${kind} (agent output: ${agentOutput.slice(-2000)})` },
  );

/** Ids of the service's tasks that should run now. */
const runningTasks = async (name: string) =>
  (await docker(['service', 'ps', name, '--filter', 'desired-state=running', '--format', '{{.ID}}'])).out.split('\n').filter(Boolean).sort();

describe('the lifecycle of a deployed application', () => {
  it('stops, starts, reloads and deletes it, each checked on its port and on the engine', async () => {
    const port = await freePort();
    const app = await ok('application.create', { name: 'life', appName: `life-${run}`, environmentId: env, sourceType: 'container' });
    const { applicationId, appName } = app as { applicationId: string; appName: string };
    services.push(appName);
    await ok('application.saveContainerProvider', { applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    await ok('application.update', {
      applicationId,
      env: 'PAGE=alive',
      command: 'sh',
      args: ['-c', 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www'],
      endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
      // Quick rolling updates: the reload waits for the engine's monitor period.
      updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 1_000_000_000 },
    });
    const status = async () => (await ok('application.one', { applicationId })).applicationStatus;

    // Deploy.
    await ok('application.deploy', { applicationId });
    const deployed = await commandResult(applicationId, 'COMMAND_KIND_DEPLOY_APPLICATION');
    expect(deployed.status, deployed.resultReason ?? '').toBe('done');
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served' });
    expect(await status()).toBe('done');

    // Stop: idle, and the port stops answering.
    expect(await ok('application.stop', { applicationId })).toEqual({});
    const stopped = await commandResult(applicationId, 'COMMAND_KIND_STOP_WORKLOAD');
    expect(stopped.status, stopped.resultReason ?? '').toBe('done');
    expect(await status()).toBe('idle');
    await waitFor(async () => (await page(port)) === null, { timeoutMs: 15_000, what: 'the port to stop answering' });
    expect(await runningTasks(appName)).toEqual([]);

    // Start: done, and it answers again.
    expect(await ok('application.start', { applicationId })).toEqual({});
    const started = await commandResult(applicationId, 'COMMAND_KIND_START_WORKLOAD');
    expect(started.status, started.resultReason ?? '').toBe('done');
    expect(await status()).toBe('done');
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served again' });

    // Reload: new tasks, same spec, still answering.
    const before = await runningTasks(appName);
    expect(before).toHaveLength(1);
    expect(await ok('application.reload', { applicationId, appName })).toEqual({});
    const reloaded = await commandResult(applicationId, 'COMMAND_KIND_RELOAD_WORKLOAD');
    expect(reloaded.status, reloaded.resultReason ?? '').toBe('done');
    expect(await status()).toBe('done');
    const after = await runningTasks(appName);
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    await waitFor(async () => (await page(port)) === 'alive', { timeoutMs: 30_000, what: 'the page to be served after the reload' });

    // Delete: the service goes, then the record.
    await ok('application.delete', { applicationId });
    await waitFor(async () => (await t.call('application.one', { applicationId })).status === 404, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `the application to be deleted (agent output: ${agentOutput.slice(-2000)})`,
    });
    expect((await docker(['service', 'inspect', appName])).ok).toBe(false);
    expect((await docker(['service', 'ls', '--filter', `label=skiff.id=${applicationId}`, '--format', '{{.Name}}'])).out).toBe('');
    await waitFor(async () => (await page(port)) === null, { timeoutMs: 15_000, what: 'the port to stop answering after the delete' });
  }, 300_000);
});
