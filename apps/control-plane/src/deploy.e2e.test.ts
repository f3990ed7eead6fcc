// A whole deploy, end to end: the API on a real Postgres, the outbox relay on a NATS of this
// file alone, the report server over gRPC, the agent as its own process, and the Docker
// Engine's swarm. The application is checked by an HTTP request to the running service.
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
// The control plane never talks to Docker; the test cleans up with the engine's own CLI.
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const removeService = (name: string) => new Promise<void>((resolve) => execFile(dockerCli, ['service', 'rm', name], () => resolve()));

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
  env = (await t.call('project.create', { name: `e2e-${run}` })).body.environments[0].environmentId;
}, 120_000);

afterAll(async () => {
  for (const name of services) await removeService(name);
  if (agent && agent.exitCode === null) {
    const exited = new Promise((resolve) => agent.once('exit', resolve));
    agent.kill('SIGTERM');
    await exited;
  }
  await t?.close();
  await nats?.stop();
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

/** A busybox application serving `page` over HTTP on a host port. */
async function webApplication(name: string, page: string, port: number, image = 'busybox:latest') {
  const app = (await t.call('application.create', { name, appName: `${name}-${run}`, environmentId: env, sourceType: 'container' })).body;
  services.push(app.appName);
  await t.call('application.saveContainerProvider', {
    applicationId: app.applicationId, containerImage: image, username: null, password: null, registryUrl: null,
  });
  const res = await t.call('application.update', {
    applicationId: app.applicationId,
    env: `PAGE=${page}`,
    command: 'sh',
    args: ['-c', 'mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www'],
    endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return app;
}

async function deployAndWait(applicationId: string, op: 'application.deploy' | 'application.redeploy' = 'application.deploy') {
  const queued = await t.call(op, { applicationId });
  expect(queued.status, JSON.stringify(queued.body)).toBe(200);
  const deploymentId = queued.body.deploymentId as string;
  return waitFor(
    async () => {
      const all = (await t.call('deployment.all', { applicationId })).body as { deploymentId: string; status: string }[];
      const mine = all.find((d) => d.deploymentId === deploymentId);
      return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `deployment ${deploymentId} to end (agent output: ${agentOutput.slice(-2000)})` },
  );
}

const page = async (port: number) => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    return res.ok ? (await res.text()).trim() : null;
  } catch {
    return null;
  }
};

describe('deploying an application', () => {
  it('runs it on the swarm, where it answers HTTP, and a redeploy rolls out the new version', async () => {
    const port = await freePort();
    const app = await webApplication('web', 'hello from skiff', port);
    const first = await deployAndWait(app.applicationId);
    expect(first.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'hello from skiff', { timeoutMs: 30_000, what: 'the page to be served' });
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('done');
    const logs = (await t.call('deployment.readLogs', { deploymentId: first.deploymentId })).body;
    expect(logs.status).toBe('done');
    expect(logs.log).not.toContain('hello from skiff'); // env values never reach the log

    await t.call('application.update', { applicationId: app.applicationId, env: 'PAGE=second version' });
    const second = await deployAndWait(app.applicationId, 'application.redeploy');
    expect(second.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'second version', { timeoutMs: 30_000, what: 'the new version to be served' });
    const deployments = (await t.call('deployment.all', { applicationId: app.applicationId })).body;
    expect(deployments.map((d: { status: string }) => d.status)).toEqual(['done', 'done']);
  }, 240_000);

  it('ends in error with the engine reason when the image does not exist', async () => {
    const app = await webApplication('broken', 'never', await freePort(), `skiff-missing-${run}:1`);
    const result = await deployAndWait(app.applicationId);
    expect(result.status).toBe('error');
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.reason).toMatch(/No such image/i);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('error');
  }, 240_000);
});
