// Control requests end to end on the agent: NATS request/reply on `agent.<id>.ctl` to a
// running Agent (JetStream commands, the real Docker Engine's swarm, an in-test gRPC report
// server). A rollout that cannot finish stands for a long deploy: its task's health check
// never passes, so the task stays `starting` and the engine's update never completes.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CANCEL_REASON, REMOVED_REASON } from '@skiff/domain';
import {
  CommandKind,
  CommandStatus,
  ControlReply,
  ControlRequest,
  DeploymentStatus,
  WorkloadKind,
  timestampFromDate,
  type Command,
  type CommandResult,
} from '@skiff/proto';
import Dockerode from 'dockerode';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent } from '../agent.js';
import { DEPLOYMENT_LABEL } from '../deployments/deploy-spec.js';
import { CommandJournal } from '../pipeline/journal.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { ReportClient } from '../reports/client.js';
import { ensureCommandStream, publishCommand, requestControl } from '../testing/nats.js';
import { CleanUp } from '../testing/clean-up.js';
import { startReportServer, type RecordingReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';

const run = randomBytes(3).toString('hex');
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });
const SECOND = 1_000_000_000;
/** A health check that never passes: during its long start period the task stays `starting`. */
const NEVER_HEALTHY = { Test: ['CMD', 'false'], Interval: 30 * SECOND, StartPeriod: 600 * SECOND, Retries: 3 };

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
  for (const a of agents.splice(0)) {
    await a.agent.stop();
    await a.reports.flush(5_000);
    a.reports.close();
    await a.journal.close();
  }
});

afterAll(async () => {
  const clean = new CleanUp(docker);
  await clean.services(services);
  await clean.channels(nc, serverIds);
  await reportServer?.stop();
  await clean.dirs(dirs);
  clean.done();
}, 120_000);

async function startAgent() {
  const serverId = `t-ctl-${run}-${++counter}`;
  serverIds.add(serverId);
  const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-ctl-'));
  dirs.push(dir);
  const started = await startTestAgent({
    serverId,
    nc,
    driver,
    journalDir: dir,
    reportTarget: reportServer.target,
    credential: `cred-${run}`,
    log: log.child({ serverId }),
    maxConcurrentDeploys: 1,
    deploy: { pollIntervalMs: 250 },
  });
  agents.push(started);
  const { journal } = started;
  return { serverId, journal };
}

function uniqueService(): string {
  const name = `skt-ctl-${run}-${++counter}`;
  services.add(name);
  return name;
}

function aDeploy(serverId: string, appName: string, spec: object = {}): Command {
  const n = ++counter;
  return {
    commandId: `cmd-${run}-${n}`,
    serverId,
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: `application:${appName}`,
    deadline: timestampFromDate(new Date(Date.now() + 300_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: `dep-${run}-${n}`,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: appName, appName },
        image: 'busybox:latest',
        env: {},
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: JSON.stringify({
          command: "sh -c 'while true; do sleep 1; done'",
          detachPlatformNetwork: true,
          updateConfigCluster: { Monitor: SECOND },
          rollbackConfigCluster: { Monitor: SECOND },
          stopGracePeriodCluster: SECOND,
          ...spec,
        }),
      },
    },
  };
}

const deploymentOf = (c: Command) => (c.payload?.$case === 'deployApplication' ? c.payload.value.deploymentId : '');
const resultsOf = (commandId: string): CommandResult[] => reportServer.results.filter((r) => r.commandId === commandId);
const waitForResult = (commandId: string, count = 1, timeoutMs = 60_000) =>
  waitUntil(`${count} result(s) of ${commandId}`, () => resultsOf(commandId).length >= count && resultsOf(commandId), timeoutMs);
const logOf = (c: Command) => reportServer.eventsOf(deploymentOf(c)).flatMap((e) => e.logLines.map((l) => l.text));

async function control(serverId: string, request: ControlRequest): Promise<ControlReply> {
  return requestControl(nc, serverId, request);
}

const cancel = (serverId: string, workloadKey: string, value: { deploymentId?: string; buildOnly?: boolean } = {}) =>
  control(serverId, { request: { $case: 'cancelWorkload', value: { workloadKey, deploymentId: '', buildOnly: false, commandId: '', ...value } } });

async function runningTasks(appName: string) {
  return (await driver.serviceTasks(appName)).filter((t) => t.state === 'running' && t.desiredState === 'running');
}

/** Waits until the deploy's new task exists and the handler watches the rollout. */
async function waitForRollout(command: Command, appName: string) {
  await waitUntil(`the rollout of ${deploymentOf(command)}`, async () => {
    if (!logOf(command).some((l) => l.startsWith('Waiting for the new version to run'))) return false;
    const tasks = await driver.serviceTasks(appName);
    return tasks.some((t) => t.labels[DEPLOYMENT_LABEL] === deploymentOf(command) && t.state === 'starting');
  }, 60_000, 200);
}

describe('control requests to a running agent', () => {
  it('cancels a rollout that cannot finish: CANCELLED within seconds, the engine rolls back, the old task keeps running', async () => {
    const { serverId, journal } = await startAgent();
    const appName = uniqueService();
    const key = `application:${appName}`;
    const v1 = aDeploy(serverId, appName);
    await publishCommand(nc, v1);
    expect((await waitForResult(v1.commandId))[0].status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    const [oldTask] = await runningTasks(appName);

    const v2 = aDeploy(serverId, appName, { healthCheckCluster: NEVER_HEALTHY });
    await publishCommand(nc, v2);
    await waitForRollout(v2, appName);

    // killBuild does not stop a rollout; a cancel of another deployment does nothing either.
    expect((await cancel(serverId, key, { buildOnly: true })).error).toBe(`the deployment of ${key} is past its build: its rollout runs`);
    expect((await cancel(serverId, key, { deploymentId: deploymentOf(v1) })).commandIds).toEqual([]);

    const asked = Date.now();
    expect(await cancel(serverId, key, { deploymentId: deploymentOf(v2) })).toEqual({ commandIds: [v2.commandId], error: '' });
    const [result] = await waitForResult(v2.commandId, 1, 10_000);
    expect(Date.now() - asked).toBeLessThan(10_000);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON });
    // The deployment's last event travels in its own report, which may follow the result.
    await waitUntil('the cancelled event', async () => reportServer.eventsOf(deploymentOf(v2)).at(-1)?.status === DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED);
    expect(reportServer.eventsOf(deploymentOf(v2)).at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED, reason: CANCEL_REASON });
    expect(logOf(v2)).toContain(`Rolling service ${appName} back to the version it ran before (the engine's rollback)`);
    expect(journal.get(v2.commandId)?.state).toBe('finished');

    // The previous version is back in the spec, and its task never stopped.
    await waitUntil('the rollback to complete', async () => {
      const [service] = await driver.servicesByLabel({ 'skiff.id': appName });
      const tasks = await driver.serviceTasks(appName);
      const v2Left = tasks.some((t) => t.labels[DEPLOYMENT_LABEL] === deploymentOf(v2) && t.desiredState === 'running');
      return service.labels[DEPLOYMENT_LABEL] === deploymentOf(v1) && service.updateState === 'rollback_completed' && !v2Left;
    }, 60_000, 250);
    expect((await runningTasks(appName)).map((t) => t.id)).toEqual([oldTask.id]);
    // Nothing runs for the workload any more.
    expect((await cancel(serverId, key)).error).toBe(`nothing runs for ${key}`);
  }, 180_000);

  it('drops the waiting deploys of a workload, never runs them (also when delivered again), and removes a cancelled first deploy', async () => {
    const { serverId } = await startAgent();
    const appName = uniqueService();
    const key = `application:${appName}`;
    const first = aDeploy(serverId, appName, { healthCheckCluster: NEVER_HEALTHY });
    const second = aDeploy(serverId, appName);
    const third = aDeploy(serverId, appName);
    await publishCommand(nc, first);
    await waitForRollout(first, appName);
    await publishCommand(nc, second);
    await publishCommand(nc, third);
    await waitUntil('both waiting deploys taken in', () => agents[0].journal.get(third.commandId) && agents[0].journal.get(second.commandId));

    expect(await control(serverId, { request: { $case: 'cleanQueue', value: { workloadKey: key, commandIds: [] } } })).toEqual({
      commandIds: [second.commandId, third.commandId],
      error: '',
    });
    for (const c of [second, third]) {
      expect((await waitForResult(c.commandId))[0]).toMatchObject({ status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: REMOVED_REASON });
      await waitUntil(`the CANCELLED event of ${deploymentOf(c)}`, () => reportServer.eventsOf(deploymentOf(c)).length > 0);
      const events = reportServer.eventsOf(deploymentOf(c));
      expect(events.map((e) => e.status)).toEqual([DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED]);
      expect(events[0].reason).toBe(REMOVED_REASON);
    }

    // The relay publishing one again (another message id): its result comes again, it does not run.
    await publishCommand(nc, second, `${second.commandId}-again`);
    await waitForResult(second.commandId, 2);

    // The first deploy created the service: cancelled, nothing of it is left.
    expect((await cancel(serverId, key)).commandIds).toEqual([first.commandId]);
    expect((await waitForResult(first.commandId))[0].status).toBe(CommandStatus.COMMAND_STATUS_CANCELLED);
    expect(logOf(first)).toContain(`Removed service ${appName}: this deployment had created it and nothing ran before`);
    await waitUntil('the service removed', async () => (await driver.servicesByLabel({ 'skiff.id': appName })).length === 0);
    await agents[0].agent.idle();
    for (const c of [second, third]) {
      expect(reportServer.eventsOf(deploymentOf(c)).some((e) => e.status === DeploymentStatus.DEPLOYMENT_STATUS_RUNNING)).toBe(false);
    }
    expect(await driver.servicesByLabel({ 'skiff.id': appName })).toEqual([]);
  }, 180_000);
});
