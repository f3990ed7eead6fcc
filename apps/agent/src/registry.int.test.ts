// Deploying from a private registry: a docker-registry with basic auth on loopback (started
// by this file), the agent's command path over the test NATS server, the real Docker Engine,
// and an in-test AgentReports gRPC server. The image is removed from the engine before each
// deploy, so the agent really pulls it with the command's credentials. Everything created
// (services, network, local image tags, the registry, consumers) is removed afterwards.
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startTestRegistry, type TestRegistry } from '@skiff/testing';
import { CommandKind, CommandStatus, DeploymentStatus, WorkloadKind, timestampFromDate, type Command } from '@skiff/proto';
import Dockerode from 'dockerode';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent } from './agent.js';
import { CommandJournal } from './pipeline/journal.js';
import { DockerodeDriver } from './docker/dockerode-driver.js';
import { DockerError } from './docker/errors.js';
import { ReportClient } from './reports/client.js';
import { ensureCommandStream, publishCommand } from './testing/nats.js';
import { CleanUp } from './testing/clean-up.js';
import { startReportServer, type RecordingReportServer } from './testing/report-server.js';
import { startTestAgent } from './testing/test-agent.js';
import { waitUntil } from './testing/wait.js';
import { capturedLog } from './testing/captured-log.js';

const run = randomBytes(3).toString('hex');
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });
const driver = new DockerodeDriver({ docker });
const NETWORK = `skt-registry-net-${run}`;
// Everything the agent logs, at debug level, to show that no credential reaches it.
const { log, text: logged } = capturedLog('debug');

let nc: NatsConnection;
let reportServer: RecordingReportServer;
let registry: TestRegistry;
let image: string;
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
  registry = await startTestRegistry();
  image = await registry.push('busybox:latest', `skiff-agent/web:${run}`);
}, 120_000);

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
  await clean.network(NETWORK);
  if (registry) await clean.step('registry', () => registry.stop());
  await clean.channels(nc, serverIds);
  await reportServer?.stop();
  await clean.dirs(dirs);
  clean.done();
}, 120_000);

async function startAgent(cluster?: NonNullable<Parameters<typeof startTestAgent>[0]['deploy']>['cluster']): Promise<string> {
  const serverId = `t-reg-${run}-${++counter}`;
  serverIds.add(serverId);
  const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-test-'));
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
    deploy: { pollIntervalMs: 250, ...(cluster ? { cluster } : {}) },
  });
  agents.push(started);
  return serverId;
}

function aDeploy(serverId: string, appName: string, password: string): Command {
  return {
    commandId: `cmd-${run}-${++counter}`,
    serverId,
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: `application:${appName}`,
    deadline: timestampFromDate(new Date(Date.now() + 120_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: `dep-${run}-${++counter}`,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: appName, appName },
        image,
        env: {},
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: JSON.stringify({
          command: "sh -c 'while true; do sleep 1; done'",
          platformNetwork: NETWORK,
          stopGracePeriodCluster: 1_000_000_000,
        }),
        registryAuth: { serverAddress: registry.address, username: registry.username, password },
      },
    },
  };
}

const deploymentOf = (c: Command) => (c.payload?.$case === 'deployApplication' ? c.payload.value.deploymentId : '');
const waitForResult = (commandId: string) =>
  waitUntil(`the result of ${commandId}`, () => reportServer.results.find((r) => r.commandId === commandId), 90_000);

/** Removes the engine's copy of the image (only the tag: busybox:latest is the same image). */
async function removeLocalImage(): Promise<void> {
  await registry.removeLocalImages(image);
  expect(await driver.imageExists(image)).toBe(false);
}

/** What must never show anywhere: the password, and the header that would carry it. */
function expectNoCredential(password: string, ...texts: string[]): void {
  const header = Buffer.from(JSON.stringify({ username: registry.username, password, serveraddress: registry.address })).toString('base64');
  for (const text of texts) {
    expect(text).not.toContain(password);
    expect(text).not.toContain(header.slice(0, 40));
    expect(text).not.toContain(header.slice(0, 40).replace(/\+/g, '-').replace(/\//g, '_'));
  }
}

describe('deploying an image from a private registry', () => {
  it('pulls it with the credentials of the command and runs it', async () => {
    await removeLocalImage();
    const serverId = await startAgent();
    const appName = `skt-reg-${run}-ok`;
    services.add(appName);
    const command = aDeploy(serverId, appName, registry.password);
    await publishCommand(nc, command);

    const result = await waitForResult(command.commandId);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    const events = reportServer.eventsOf(deploymentOf(command));
    expect(events.at(-1)?.status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    const text = events.flatMap((e) => e.logLines.map((l) => l.text));
    expect(text).toContain(`Pulling image ${image} from ${registry.address} with the application's registry credentials`);
    expect(text).toContain(`Pulled image ${image}`);
    expect(await driver.imageExists(image)).toBe(true);
    const running = (await driver.serviceTasks(appName)).filter((t) => t.state === 'running');
    expect(running).toHaveLength(1);
    expect(running[0].image).toContain(image);
    expectNoCredential(registry.password, JSON.stringify(events), JSON.stringify(reportServer.results), logged());
  }, 120_000);

  it('fails with the registry reason when the password is wrong, and creates no service', async () => {
    await removeLocalImage();
    const serverId = await startAgent();
    const appName = `skt-reg-${run}-denied`;
    services.add(appName);
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const command = aDeploy(serverId, appName, wrong);
    await publishCommand(nc, command);

    const result = await waitForResult(command.commandId);
    expect(result.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(result.reason).toMatch(new RegExp(`^could not pull image ${image.replace(/[.]/g, '\\.')}: `));
    expect(result.reason).toMatch(/unauthorized|authentication required/i);
    const events = reportServer.eventsOf(deploymentOf(command));
    expect(events.at(-1)).toMatchObject({ status: DeploymentStatus.DEPLOYMENT_STATUS_ERROR, reason: result.reason });
    expect(await driver.servicesByLabel({ 'skiff.id': appName })).toEqual([]);
    expect(await driver.imageExists(image)).toBe(false);
    expectNoCredential(wrong, JSON.stringify(events), JSON.stringify(reportServer.results), logged());
  }, 120_000);
});

describe('a rollback to an image built here, on a swarm of several nodes', () => {
  it('pushes the kept image to the cluster registry and names it by digest, as a build does', async () => {
    const local = `skt-reg-${run}-rb:dep1`;
    const appName = `skt-reg-${run}-rb`;
    services.add(appName);
    await docker.getImage('busybox:latest').tag({ repo: `skt-reg-${run}-rb`, tag: 'dep1' });
    const self = ((await docker.info()) as { Swarm: { NodeID: string } }).Swarm.NodeID;
    const node = (id: string, isSelf: boolean) => ({ id, hostname: id.slice(0, 4), role: 'manager', availability: 'active', state: 'ready', address: '', leader: isSelf, engineVersion: '', labels: {}, self: isSelf });
    try {
      const serverId = await startAgent({
        nodes: { list: async () => [node(self, true), node('z'.repeat(25), false)] },
        registry: { address: registry.address, username: registry.username, password: registry.password },
      });
      const command = aDeploy(serverId, appName, registry.password);
      if (command.payload?.$case !== 'deployApplication') throw new Error('a deploy');
      command.payload.value = { ...command.payload.value, image: local, localImage: true, registryAuth: undefined };
      await publishCommand(nc, command);

      const result = await waitForResult(command.commandId);
      expect(result, JSON.stringify(reportServer.eventsOf(deploymentOf(command)))).toMatchObject({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED });
      const text = reportServer.eventsOf(deploymentOf(command)).flatMap((e) => e.logLines.map((l) => l.text));
      expect(text).toContainEqual(expect.stringContaining("Pushed the image to the cluster registry for the 2 nodes of this server's swarm"));
      const [service] = await driver.servicesByLabel({ 'skiff.id': appName });
      expect(service?.image).toMatch(new RegExp(`^${registry.address}/${local}@sha256:[0-9a-f]{64}$`));
      expectNoCredential(registry.password, logged());
    } finally {
      await registry.removeLocalImages(`${registry.address}/${local}`, local).catch(() => {});
    }
  }, 120_000);
});

describe('DockerodeDriver.pullImage', () => {
  it('pulls with a login, and refuses without one with the registry reason', async () => {
    await removeLocalImage();
    const err = await driver.pullImage(image).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DockerError);
    expect((err as DockerError).engineMessage).toMatch(/no basic auth credentials|unauthorized|authentication required/i);
    expect(await driver.imageExists(image)).toBe(false);

    await driver.pullImage(image, {
      registryAuth: { username: registry.username, password: registry.password, serveraddress: registry.address },
      timeoutMs: 60_000,
    });
    expect(await driver.imageExists(image)).toBe(true);
  }, 120_000);

  it('fails a pull that passes its time limit', async () => {
    const err = await driver
      .pullImage(`${registry.address}/skiff-agent/absent:${run}`, { timeoutMs: 1 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DockerError);
    expect((err as DockerError).engineMessage).toBe('the pull did not finish within 1 ms');
  });
});
