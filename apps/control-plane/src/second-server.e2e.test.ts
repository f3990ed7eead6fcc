// A second server, end to end: a second Docker Engine on this machine (libs/testing
// second-docker.ts) and a second agent process that joins with the one-time token of
// server.create. An application placed on that server (`serverId`) is deployed there and not
// on the first engine; the agent adopts what runs when it restarts after a kill -9; the
// server goes offline when its agent stops. Heartbeats every second keep the test short.
// The channel is TLS as tools/up sets it up: the control plane's CA signs the certificate of
// its gRPC server and of NATS, and the agent pins the CA the join command carries.
import { type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SecondDocker, spawnOwned, startDedicatedNats, startSecondDocker, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChannelTls, ensureChannelTls } from './agents/tls/channel-tls.js';
import { startTestPlatform, type TestPlatform } from './testing/harness.js';
import { docker, freePort, page, webServerSettings } from './testing/stack.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const agentMain = fileURLToPath(new URL('../../agent/src/main.ts', import.meta.url));
const run = Math.random().toString(16).slice(2, 8);

let second: SecondDocker;
let nats: Awaited<ReturnType<typeof startDedicatedNats>>;
let t: TestPlatform;
let environmentId: string;
const agentDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-second-agent-'));
const tlsDir = mkdtempSync(join(tmpdir(), 'skiff-e2e-second-tls-'));
let tls: ChannelTls;

interface AgentProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}
const agents: AgentProcess[] = [];

function startAgent(env: Record<string, string>): AgentProcess {
  const child = spawnOwned(process.execPath, ['--import', 'tsx', agentMain], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SKIFF_AGENT_DATA_DIR: agentDir, SKIFF_DOCKER_SOCKET: second.socket, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (out += c));
  const agent = { child, output: () => out, exited: new Promise((resolve) => child.once('exit', resolve)) };
  agents.push(agent);
  return agent;
}

async function stopAgent(agent: AgentProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill(signal);
  await agent.exited;
}

beforeAll(async () => {
  second = await startSecondDocker();
  tls = ensureChannelTls(tlsDir, ['127.0.0.1', '::1', 'localhost']);
  nats = await startDedicatedNats({ tls: { certFile: tls.files.cert, keyFile: tls.files.key } });
  t = await startTestPlatform({
    nats: { url: nats.url, pollMs: 200 },
    grpc: { host: '127.0.0.1', port: 0 },
    tls,
    agents: { heartbeatIntervalSeconds: 1 },
  });
  environmentId = (await t.call('project.create', { name: `second-${run}` })).body.environments[0].environmentId;
}, 180_000);

afterAll(async () => {
  for (const agent of agents) await stopAgent(agent, 'SIGKILL');
  await t?.close();
  await nats?.stop();
  await second?.stop();
  rmSync(agentDir, { recursive: true, force: true });
  rmSync(tlsDir, { recursive: true, force: true });
}, 120_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** What the agent logged of its channel's security (channel-ca.ts). */
const channelOf = (agent: AgentProcess) =>
  agent
    .output()
    .split('\n')
    .filter((l) => l.includes('"agent channel security"'))
    .map((l) => (JSON.parse(l) as { channel: unknown }).channel)[0];

const serverOf = async (serverId: string) => (await ok('server.one', { serverId })) as { status: string; agentVersion: string | null; dockerVersion: string | null };

/** Waits until the newest command of `kind` for the application has a result. */
const commandResult = (applicationId: string, kind: string, agent: () => AgentProcess) =>
  waitFor(
    async () => {
      const row = await t.db
        .selectFrom('commands')
        .select(['status', 'resultReason'])
        .where('workloadKey', '=', `application:${applicationId}`)
        .where('kind', '=', kind)
        .orderBy('position', 'desc')
        .executeTakeFirst();
      return row && (row.status === 'done' || row.status === 'failed') ? row : null;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: () => `the result of ${kind} (agent output: ${agent().output().slice(-2000)})` },
  );

/** The service's version and the ids of its tasks that should run, with whether each runs. */
const serviceState = async (name: string) => {
  const version = (await second.docker(['service', 'inspect', name, '--format', '{{.Version.Index}}'])).out;
  const listed = (await second.docker(['service', 'ps', name, '--filter', 'desired-state=running', '--format', '{{.ID}} {{.CurrentState}}'])).out
    .split('\n')
    .filter(Boolean)
    .sort();
  return { version, tasks: listed.map((l) => l.split(' ')[0]), running: listed.filter((l) => l.includes(' Running')).length };
};

/** What the service serves, asked inside its container on the second engine (no bridge there). */
const pageInside = async (name: string) => {
  const id = (await second.docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${name}`])).out.split('\n')[0];
  if (!id) return null;
  const res = await second.docker(['exec', id, 'wget', '-q', '-O', '-', 'http://127.0.0.1:8080/'], 10_000);
  return res.ok ? res.out : null;
};

describe('a second server', () => {
  let serverId: string;
  let env: Record<string, string>;
  let agent: AgentProcess;
  let token: string;

  it('joins with the token of server.create and shows online', async () => {
    const created = await ok('server.create', { name: `second-${run}`, address: '127.0.0.1' });
    serverId = created.serverId;
    token = created.join.token;
    expect(created.status).toBe('pending');
    env = created.join.env;
    expect(env.SKIFF_CONTROL_PLANE_GRPC).toBe(`127.0.0.1:${t.platform.grpcPort}`);
    expect(env.SKIFF_NATS_URL).toBe(nats.url);
    expect(env.SKIFF_NATS_URL).toMatch(/^tls:\/\//);
    expect(Buffer.from(env.SKIFF_CONTROL_PLANE_CA!, 'base64').toString('utf8')).toBe(tls.ca);

    agent = startAgent(env);
    const online = await waitFor(async () => ((await serverOf(serverId)).status === 'online' ? serverOf(serverId) : null), {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: () => `the server to be online (agent output: ${agent.output().slice(-2000)})`,
    });
    expect(online.agentVersion).toBe('0.1.0');
    expect(online.dockerVersion).toMatch(/^\d+\.\d+/);
    // The credential is stored privately; neither it nor the token reaches the log.
    const file = join(agentDir, 'server-credential.json');
    await waitFor(() => existsSync(file), { what: 'the credential to be stored' });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { serverId: string; credential: string };
    expect(stored.serverId).toBe(serverId);
    expect(agent.output()).not.toContain(stored.credential);
    expect(agent.output()).not.toContain(token);
    // Both connections are TLS, pinned to the CA of the join command, kept for later starts.
    expect(channelOf(agent)).toEqual({ grpc: 'tls', nats: 'tls', ca: 'given' });
    expect(readFileSync(join(agentDir, 'control-plane-ca.pem'), 'utf8')).toBe(tls.ca);
    expect(statSync(join(agentDir, 'control-plane-ca.pem')).mode & 0o777).toBe(0o644);
    await waitFor(() => agent.output().includes('agent started: connected to NATS'), { timeoutMs: 30_000, what: 'the agent to connect to NATS' });
    // The token was used up.
    const row = await t.db.selectFrom('servers').select(['joinTokenHash']).where('id', '=', serverId).executeTakeFirstOrThrow();
    expect(row.joinTokenHash).toBeNull();
  }, 90_000);

  let applicationId: string;
  const appName = `second-app-${run}`;

  it('deploys an application with its serverId on the second engine, not on the first', async () => {
    const port = await freePort();
    const app = await ok('application.create', { name: 'second', appName, environmentId, serverId, sourceType: 'container' });
    applicationId = app.applicationId;
    await ok('application.saveContainerProvider', { applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    await ok('application.update', {
      applicationId,
      ...webServerSettings('served by the second server', port),
      updateConfigCluster: { Parallelism: 1, Order: 'stop-first', FailureAction: 'rollback', Monitor: 1_000_000_000 },
    });
    const queued = await ok('application.deploy', { applicationId });
    const deployment = await waitFor(
      async () => {
        const all = (await ok('deployment.all', { applicationId })) as { deploymentId: string; status: string }[];
        const mine = all.find((d) => d.deploymentId === queued.deploymentId);
        return mine && ['done', 'error', 'cancelled'].includes(mine.status) ? mine : null;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: () => `the deployment to end (agent output: ${agent.output().slice(-2000)})` },
    );
    expect(deployment.status).toBe('done');
    expect((await ok('application.one', { applicationId })).applicationStatus).toBe('done');

    expect((await second.docker(['service', 'inspect', appName])).ok).toBe(true);
    expect((await docker(['service', 'inspect', appName])).ok).toBe(false);
    await waitFor(async () => (await serviceState(appName)).running === 1, {
      timeoutMs: 30_000,
      what: 'the task to run on the second engine',
    });
    // The page, from inside the task's container.
    await waitFor(async () => (await pageInside(appName)) === 'served by the second server', { timeoutMs: 30_000, what: 'the page inside the container' });
    // And through its host-mode port (published by the second engine's userland proxy).
    await waitFor(async () => (await page(port)) === 'served by the second server', { timeoutMs: 30_000, what: 'the page on the host port' });
  }, 180_000);

  it('after a kill -9, the restarted agent (no token now) adopts the service without touching it; stop and start still work', async () => {
    const before = await serviceState(appName);
    expect(before.tasks).toHaveLength(1);
    await stopAgent(agent, 'SIGKILL');

    // Neither the token nor the CA: the agent uses the credential and the CA it kept.
    const { SKIFF_JOIN_TOKEN: _token, SKIFF_CONTROL_PLANE_CA: _ca, ...withoutToken } = env;
    agent = startAgent(withoutToken);
    await waitFor(() => agent.output().includes('adopted the workloads running on this engine'), {
      timeoutMs: 60_000,
      what: () => `the agent to adopt (output: ${agent.output().slice(-2000)})`,
    });
    const adopted = agent
      .output()
      .split('\n')
      .filter((l) => l.includes('adopted the workloads'))
      .map((l) => JSON.parse(l) as { workloads: number; byKind: Record<string, number> })[0];
    expect(adopted.workloads).toBeGreaterThanOrEqual(1);
    expect(adopted.byKind.application).toBeGreaterThanOrEqual(1);
    await waitFor(() => agent.output().includes('agent started: connected to NATS'), { timeoutMs: 30_000, what: 'the agent to connect' });
    expect(await serviceState(appName)).toEqual(before);
    expect(agent.output()).toContain('using the credential stored by an earlier join');
    expect(channelOf(agent)).toEqual({ grpc: 'tls', nats: 'tls', ca: 'stored' });

    await ok('application.stop', { applicationId });
    const stopped = await commandResult(applicationId, 'COMMAND_KIND_STOP_WORKLOAD', () => agent);
    expect(stopped.status, stopped.resultReason ?? '').toBe('done');
    await waitFor(async () => (await serviceState(appName)).tasks.length === 0, { timeoutMs: 30_000, what: 'the task to stop' });

    await ok('application.start', { applicationId });
    const started = await commandResult(applicationId, 'COMMAND_KIND_START_WORKLOAD', () => agent);
    expect(started.status, started.resultReason ?? '').toBe('done');
    await waitFor(async () => (await pageInside(appName)) === 'served by the second server', { timeoutMs: 30_000, what: 'the page again' });
  }, 180_000);

  it('shows offline once its agent stops', async () => {
    expect((await serverOf(serverId)).status).toBe('online');
    await stopAgent(agent, 'SIGTERM');
    await waitFor(async () => (await serverOf(serverId)).status === 'offline', { timeoutMs: 15_000, intervalMs: 250, what: 'the server to be offline' });
    // The service on the second engine keeps running without its agent.
    expect((await serviceState(appName)).tasks).toHaveLength(1);
  }, 60_000);

  it('removed with its workloads: the agent, told at its next report, removes them from the machine and stops', async () => {
    const { SKIFF_JOIN_TOKEN: _token, ...withoutToken } = env;
    agent = startAgent(withoutToken);
    await waitFor(async () => (await serverOf(serverId)).status === 'online', { timeoutMs: 60_000, intervalMs: 250, what: () => `the agent back (output: ${agent.output().slice(-2000)})` });
    // Not Skiff's: stays. Not waited for until it runs (its existence is what counts); with an
    // init, so that its removal and the engine's stop do not wait out sleep's 10 s grace period.
    const foreign = `foreign-${run}`;
    expect((await second.docker(['service', 'create', '--detach', '--init', '--name', foreign, '--endpoint-mode', 'dnsrr', 'busybox:latest', 'sleep', '600'])).ok).toBe(true);

    const refused = await t.call('server.remove', { serverId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].message).toContain('1 application still on this server');
    await ok('server.remove', { serverId, workloads: 'remove' });
    expect(await agent.exited).toBe(0);
    expect(agent.output()).toContain('the workloads Skiff ran here are removed (their volumes and images stay)');
    expect((await second.docker(['service', 'inspect', appName])).ok).toBe(false);
    expect((await second.docker(['service', 'inspect', foreign])).ok).toBe(true);
    expect((await t.call('application.one', { applicationId })).status).toBe(404);
    await second.docker(['service', 'rm', foreign]);
  }, 120_000);
});
