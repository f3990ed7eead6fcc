// The agent's command path end to end on this machine: commands published on the test
// NATS server's JetStream, run against the real Docker Engine (single-node swarm, local
// busybox:latest), reported to an in-test AgentReports gRPC server over loopback.
// Every test uses its own server id, journal directory and service names; everything
// created (services, the test network, consumers, stream messages) is removed afterwards.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  Command,
  CommandKind,
  CommandStatus,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  type CommandResult,
  type DeploymentEvent,
} from '@skiff/proto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent } from './agent.js';
import { DEPLOYMENT_LABEL } from './deployments/deploy-spec.js';
import { CommandJournal } from './pipeline/journal.js';
import { DockerodeDriver } from './docker/dockerode-driver.js';
import { ReportClient } from './reports/client.js';
import { ensureCommandStream, publishCommand, publishRaw } from './testing/nats.js';
import { CleanUp } from './testing/clean-up.js';
import { startReportServer, type RecordingReportServer } from './testing/report-server.js';
import { startTestAgent } from './testing/test-agent.js';
import { waitUntil } from './testing/wait.js';

const run = randomBytes(3).toString('hex');
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });
const NETWORK = `skt-agent-net-${run}`;
const SECRET = `env-secret-${run}`;
const CREDENTIAL = `agent-cred-${run}`;

let nc: NatsConnection;
let reportServer: RecordingReportServer;
const services = new Set<string>();
const serverIds = new Set<string>();
const dirs: string[] = [];
const agents: Array<{ agent: Agent; journal: CommandJournal; reports: ReportClient }> = [];
let counter = 0;

beforeAll(async () => {
  await docker.ping();
  nc = await connect({ servers: inject('natsUrl') });
  await ensureCommandStream(nc);
  reportServer = await startReportServer();
});

afterEach(async () => {
  for (const a of agents.splice(0)) await stopAgent(a);
});

afterAll(async () => {
  const clean = new CleanUp(docker);
  await clean.services(services);
  await clean.network(NETWORK);
  await clean.channels(nc, serverIds);
  await reportServer?.stop();
  await clean.dirs(dirs);
  clean.done();
}, 120_000);

function uniqueServerId(): string {
  const id = `t-${run}-${++counter}`;
  serverIds.add(id);
  return id;
}

function uniqueService(): string {
  const name = `skt-agent-${run}-${++counter}`;
  services.add(name);
  return name;
}

async function startAgent(serverId: string, dataDir?: string, maxConcurrentDeploys = 1) {
  const dir = dataDir ?? (await mkdtemp(join(tmpdir(), 'skiff-agent-test-')));
  if (!dataDir) dirs.push(dir);
  const started = await startTestAgent({
    serverId,
    nc,
    driver,
    journalDir: dir,
    reportTarget: reportServer.target,
    credential: CREDENTIAL,
    log: log.child({ serverId }),
    maxConcurrentDeploys,
    deploy: { pollIntervalMs: 250 },
  });
  const handle = { ...started, dir };
  agents.push(handle);
  return handle;
}

async function stopAgent(a: { agent: Agent; journal: CommandJournal; reports: ReportClient }): Promise<void> {
  await a.agent.stop();
  await a.reports.flush(5_000);
  a.reports.close();
  await a.journal.close();
}

function aDeploy(
  serverId: string,
  appName: string,
  overrides: { image?: string; deadline?: Date; deploymentId?: string; commandId?: string; specJson?: object } = {},
): Command {
  const deploymentId = overrides.deploymentId ?? `dep-${run}-${++counter}`;
  return {
    commandId: overrides.commandId ?? `cmd-${run}-${++counter}`,
    serverId,
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: `application:${appName}`,
    deadline: timestampFromDate(overrides.deadline ?? new Date(Date.now() + 120_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: appName, appName },
        image: overrides.image ?? 'busybox:latest',
        env: { GREETING: 'hello', API_TOKEN: SECRET },
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: JSON.stringify({
          command: "sh -c 'while true; do sleep 1; done'",
          platformNetwork: NETWORK,
          // A short monitor keeps rolling updates quick in tests.
          updateConfigCluster: { Monitor: 1_000_000_000 },
          stopGracePeriodCluster: 1_000_000_000,
          ...overrides.specJson,
        }),
      },
    },
  };
}

const deploymentOf = (c: Command) => (c.payload?.$case === 'deployApplication' ? c.payload.value.deploymentId : '');
const resultsOf = (commandId: string): CommandResult[] => reportServer.results.filter((r) => r.commandId === commandId);
const waitForResult = (commandId: string, count = 1, timeoutMs = 60_000) =>
  waitUntil(`${count} result(s) of ${commandId}`, () => resultsOf(commandId).length >= count && resultsOf(commandId), timeoutMs);

function expectWellFormedEvents(events: DeploymentEvent[], last: DeploymentStatus): void {
  expect(events.map((e) => Number(e.sequence))).toEqual(events.map((_, i) => i + 1));
  expect(events[0].status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_RUNNING);
  expect(events.at(-1)?.status).toBe(last);
  expect(events.filter((e) => e.status !== DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED)).toHaveLength(2);
  expect(JSON.stringify(events)).not.toContain(SECRET);
}

async function runningTasks(appName: string) {
  return (await driver.serviceTasks(appName)).filter((t) => t.state === 'running' && t.desiredState === 'running');
}

describe('the agent against NATS, Docker and a gRPC report server', () => {
  it('deploys busybox, reports DONE, and runs a re-delivered command only once', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId);
    const command = aDeploy(serverId, appName);
    await publishCommand(nc, command);

    const [result] = await waitForResult(command.commandId);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    const events = reportServer.eventsOf(deploymentOf(command));
    expectWellFormedEvents(events, DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    const text = events.flatMap((e) => e.logLines.map((l) => l.text));
    expect(text).toContain(`Deploying image busybox:latest as service ${appName}`);
    expect(text).toContain(`Created service ${appName}`);
    expect(text.at(-1)).toBe('Deployment done: 1/1 tasks running');
    expect(new Set(reportServer.authorizations)).toEqual(new Set([`Bearer ${CREDENTIAL}`]));

    const [task] = await runningTasks(appName);
    expect(task.labels[DEPLOYMENT_LABEL]).toBe(deploymentOf(command));
    const container = (await docker.getContainer(task.containerId!).inspect()) as { Config: { Env: string[]; Labels: Record<string, string> } };
    expect(container.Config.Env).toEqual(expect.arrayContaining(['GREETING=hello', `API_TOKEN=${SECRET}`]));
    expect(container.Config.Labels).toMatchObject({ 'skiff.managed': 'true', 'skiff.id': appName, [DEPLOYMENT_LABEL]: deploymentOf(command) });
    const before = (await driver.servicesByLabel({ 'skiff.id': appName }))[0];

    // The relay re-publishes it (past JetStream's de-duplication window: another msg id).
    const eventCount = reportServer.events.length;
    await publishCommand(nc, command, `${command.commandId}-again`);
    const twice = await waitForResult(command.commandId, 2);
    expect(twice[1]).toEqual(twice[0]);
    const after = (await driver.servicesByLabel({ 'skiff.id': appName }))[0];
    expect(after.version).toBe(before.version);
    expect((await runningTasks(appName)).map((t) => t.id)).toEqual([task.id]);
    // The same events again, which the control plane de-duplicates by sequence.
    await waitUntil('events re-sent', () => reportServer.events.length >= eventCount + events.length);
    expect(reportServer.eventsOf(deploymentOf(command))).toEqual(events);
  }, 120_000);

  it("fails a deploy of an image that does not exist with the engine's reason", async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId);
    const image = `skiff-missing-${run}:none`;
    const command = aDeploy(serverId, appName, { image });
    await publishCommand(nc, command);
    const [result] = await waitForResult(command.commandId, 1, 90_000);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(result.reason).toContain(`No such image: ${image}`);
    const events = reportServer.eventsOf(deploymentOf(command));
    expectWellFormedEvents(events, DeploymentStatus.DEPLOYMENT_STATUS_ERROR);
    expect(events.at(-1)?.reason).toBe(result.reason);
  }, 120_000);

  it('fails a deploy whose tasks never run at its deadline, saying why the last one waits', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId);
    const command = aDeploy(serverId, appName, {
      deadline: new Date(Date.now() + 12_000),
      specJson: { placementCluster: { Constraints: [`node.labels.skiff-nowhere-${run}==yes`] } },
    });
    await publishCommand(nc, command);
    const [result] = await waitForResult(command.commandId, 1, 60_000);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(result.reason).toMatch(/^the new version did not run before the command's deadline \(0\/1 tasks running; last: Task 1: pending \(no suitable node/);
  }, 90_000);

  it('expires a command whose deadline passed before it could start, without touching Docker', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId);
    const command = aDeploy(serverId, appName, { deadline: new Date(Date.now() - 1_000) });
    await publishCommand(nc, command);
    const [result] = await waitForResult(command.commandId);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_EXPIRED);
    expect(result.reason).toMatch(/^the deadline \(.+\) passed before the command could start$/);
    const events = reportServer.eventsOf(deploymentOf(command));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ sequence: '1', status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason: result.reason });
    expect(await driver.servicesByLabel({ 'skiff.id': appName })).toEqual([]);
  });

  it('fails a deploy whose spec the domain refuses, with its message', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId);
    const command = aDeploy(serverId, appName, { specJson: { memoryLimit: '1024' } });
    await publishCommand(nc, command);
    const [result] = await waitForResult(command.commandId);
    expect(result).toMatchObject({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: 'memoryLimit must be at least 6291456 bytes (6 MiB), got 1024',
    });
    expectWellFormedEvents(reportServer.eventsOf(deploymentOf(command)), DeploymentStatus.DEPLOYMENT_STATUS_ERROR);
    expect(await driver.servicesByLabel({ 'skiff.id': appName })).toEqual([]);
  });

  it('rejects malformed messages, unknown kinds and commands for another server, and acks them', async () => {
    const serverId = uniqueServerId();
    const { journal } = await startAgent(serverId);
    const garbageId = `garbage-${run}`;
    await publishRaw(nc, serverId, new Uint8Array([0x0a, 0xff, 0xff, 0xff]), garbageId);
    const unknown = Command.fromPartial({ commandId: `unknown-${run}`, serverId, kind: 99 as CommandKind, workloadKey: 'x:y' });
    await publishCommand(nc, unknown);
    const stray = { ...aDeploy('someone-else', 'nope'), commandId: `stray-${run}` };
    await publishRaw(nc, serverId, Command.encode(stray).finish(), stray.commandId);

    const [garbage] = await waitForResult(garbageId);
    expect(garbage.status).toBe(CommandStatus.COMMAND_STATUS_REJECTED);
    expect(garbage.reason).toMatch(/^malformed command: /);
    expect((await waitForResult(unknown.commandId))[0]).toMatchObject({
      status: CommandStatus.COMMAND_STATUS_REJECTED,
      reason: 'unknown command kind 99',
    });
    expect((await waitForResult(stray.commandId))[0]).toMatchObject({
      status: CommandStatus.COMMAND_STATUS_REJECTED,
      reason: `the command is for server "someone-else", not this server ("${serverId}")`,
    });
    expect(journal.get(garbageId)?.state).toBe('finished');
    // All acked: nothing is waiting for this server's consumer.
    await waitUntil('every message acked', async () => {
      const { jetstreamManager } = await import('@nats-io/jetstream');
      const info = await (await jetstreamManager(nc)).consumers.info('SKIFF_COMMANDS', `agent-${serverId}`);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    });
  });

  it('does not run a finished command again after a restart with the same journal', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    const first = await startAgent(serverId);
    const command = aDeploy(serverId, appName);
    await publishCommand(nc, command);
    const [result] = await waitForResult(command.commandId);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    await stopAgent(first);
    agents.splice(agents.indexOf(first as never), 1);
    const version = (await driver.servicesByLabel({ 'skiff.id': appName }))[0].version;
    const tasks = (await runningTasks(appName)).map((t) => t.id);

    await startAgent(serverId, first.dir);
    await publishCommand(nc, command, `${command.commandId}-after-restart`);
    const again = await waitForResult(command.commandId, 2);
    expect(again[1]).toEqual(result);
    expect((await driver.servicesByLabel({ 'skiff.id': appName }))[0].version).toBe(version);
    expect((await runningTasks(appName)).map((t) => t.id)).toEqual(tasks);
    expect(reportServer.eventsOf(deploymentOf(command)).filter((e) => e.status === DeploymentStatus.DEPLOYMENT_STATUS_RUNNING)).toHaveLength(1);
  }, 120_000);

  it('runs again a deploy that an earlier agent started and did not finish', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-test-'));
    dirs.push(dir);
    // What an agent killed in the middle of the deploy leaves behind: acked, journaled, started.
    const command = aDeploy(serverId, appName);
    const crashed = await CommandJournal.open(dir);
    await crashed.accept(command);
    await crashed.start(command.commandId);
    await crashed.close();

    await startAgent(serverId, dir);
    const [result] = await waitForResult(command.commandId);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    const events = reportServer.eventsOf(deploymentOf(command));
    expectWellFormedEvents(events, DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    expect(events[0].logLines[0].text).toBe('The agent stopped during this deployment and runs it again');
    expect(await runningTasks(appName)).toHaveLength(1);
  }, 120_000);

  it('fails, without running it, a started deploy whose deadline passed while the agent was down', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-test-'));
    dirs.push(dir);
    const command = aDeploy(serverId, appName, { deadline: new Date(Date.now() - 1_000) });
    const crashed = await CommandJournal.open(dir);
    await crashed.accept(command);
    await crashed.start(command.commandId);
    await crashed.close();

    await startAgent(serverId, dir);
    const [result] = await waitForResult(command.commandId);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(result.reason).toMatch(/^the deadline \(.+\) passed while the agent was stopped during the run$/);
    expect(reportServer.eventsOf(deploymentOf(command)).at(-1)).toMatchObject({
      status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR,
      reason: result.reason,
    });
    expect(await driver.servicesByLabel({ 'skiff.id': appName })).toEqual([]);
  });

  it('runs the deploys of one workload in order, rolling out the second version', async () => {
    const serverId = uniqueServerId();
    const appName = uniqueService();
    await startAgent(serverId, undefined, 2);
    const one = aDeploy(serverId, appName);
    const two = aDeploy(serverId, appName);
    await publishCommand(nc, one);
    await publishCommand(nc, two);
    const [second] = await waitForResult(two.commandId, 1, 90_000);
    expect(second.status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(resultsOf(one.commandId)[0].status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);

    // Everything of the first deployment was reported before the second one started.
    const order = reportServer.events.map((e) => `${e.deploymentId}:${e.status}`);
    const firstDone = order.indexOf(`${deploymentOf(one)}:${DeploymentStatus.DEPLOYMENT_STATUS_DONE}`);
    const secondRunning = order.indexOf(`${deploymentOf(two)}:${DeploymentStatus.DEPLOYMENT_STATUS_RUNNING}`);
    expect(firstDone).toBeGreaterThanOrEqual(0);
    expect(secondRunning).toBeGreaterThan(firstDone);
    expect(reportServer.eventsOf(deploymentOf(two)).flatMap((e) => e.logLines.map((l) => l.text))).toContain(`Updated service ${appName}`);

    const running = await runningTasks(appName);
    expect(running.map((t) => t.labels[DEPLOYMENT_LABEL])).toEqual([deploymentOf(two)]);
    const [service] = await driver.servicesByLabel({ 'skiff.id': appName });
    expect(service.labels[DEPLOYMENT_LABEL]).toBe(deploymentOf(two));
  }, 150_000);
});
