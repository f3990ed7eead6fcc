// Deploying an image from a private registry, end to end: a docker-registry with basic auth
// on loopback holds the image (pushed by this file, then removed from the engine), the API
// on a real Postgres stores the application's registry login, the outbox relay carries it to
// the agent (its own process) over a NATS of this file alone, and the agent pulls with it
// and runs the service on the swarm. Checked by an HTTP request to the running service.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDedicatedNats, startTestRegistry, waitFor, type TestRegistry } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from './testing/harness.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const agentMain = fileURLToPath(new URL('../../agent/src/main.ts', import.meta.url));
const run = randomBytes(3).toString('hex');
const CREDENTIAL = `e2e-${randomBytes(16).toString('hex')}`;
// The control plane never talks to Docker; the test cleans up with the engine's own CLI.
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';
const removeService = (name: string) => new Promise<void>((resolve) => execFile(dockerCli, ['service', 'rm', name], () => resolve()));
const imagePresent = (ref: string) =>
  new Promise<boolean>((resolve) => execFile(dockerCli, ['image', 'inspect', ref], (err) => resolve(!err)));

let t: TestPlatform;
let nats: Awaited<ReturnType<typeof startDedicatedNats>>;
let registry: TestRegistry;
let image: string;
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
  registry = await startTestRegistry();
  image = await registry.push('busybox:latest', `skiff-e2e/web:${run}`);
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
  env = (await t.call('project.create', { name: `e2e-registry-${run}` })).body.environments[0].environmentId;
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
  // After the services: it also removes the engine's copy of the pulled image.
  await registry?.stop();
  if (agentDir) rmSync(agentDir, { recursive: true, force: true });
}, 60_000);

/** A busybox application from the private registry, serving `page` over HTTP on a host port. */
async function privateWebApplication(name: string, password: string, page: string, port: number) {
  const app = (await t.call('application.create', { name, appName: `${name}-${run}`, environmentId: env, sourceType: 'container' })).body;
  services.push(app.appName);
  const saved = await t.call('application.saveContainerProvider', {
    applicationId: app.applicationId,
    containerImage: image,
    username: registry.username,
    password,
    registryUrl: `http://${registry.address}`,
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  expect(JSON.stringify(saved.body)).not.toContain(password);
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

async function deployAndWait(applicationId: string) {
  const queued = await t.call('application.deploy', { applicationId });
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

describe('deploying an application from a private registry', () => {
  it('ends in error with the registry reason when the password is wrong', async () => {
    expect(await imagePresent(image)).toBe(false);
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const app = await privateWebApplication('denied', wrong, 'never', await freePort());
    const result = await deployAndWait(app.applicationId);
    expect(result.status).toBe('error');
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.reason).toMatch(/^could not pull image .+: .*(unauthorized|authentication required)/i);
    expect(`${logs.log}${logs.reason}${agentOutput}`).not.toContain(wrong);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('error');
    expect(await imagePresent(image)).toBe(false);
  }, 240_000);

  it('pulls the image with the stored login and runs it, where it answers HTTP', async () => {
    expect(await imagePresent(image)).toBe(false);
    const port = await freePort();
    const app = await privateWebApplication('private', registry.password, 'hello from a private registry', port);
    const result = await deployAndWait(app.applicationId);
    expect(result.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'hello from a private registry', { timeoutMs: 30_000, what: 'the page to be served' });
    expect(await imagePresent(image)).toBe(true);
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(logs.log).toContain(`Pulling image ${image} from ${registry.address} with the application's registry credentials`);
    expect(logs.log).toContain(`Pulled image ${image}`);
    expect(`${logs.log}${agentOutput}`).not.toContain(registry.password);
  }, 240_000);
});
