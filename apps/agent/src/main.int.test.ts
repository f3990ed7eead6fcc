// The agent program as a process: started with `node --import tsx main.ts`, against the
// test NATS server and an in-test gRPC report server, or against nothing at all.
import { type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { Command, CommandKind, CommandStatus, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { serverRemovedDetails } from '@skiff/domain';
import { type DedicatedNats, spawnOwned, startDedicatedNats } from '@skiff/testing';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { throwawayOwner } from './dumps/throwaway-owner.js';
import { CommandJournal, JOURNAL_FILE } from './pipeline/journal.js';
import { STORED_NATS_CREDENTIALS_FILE, storeNatsCredentials } from './credential.js';
import { agentCredentialsMinter, type AgentCredentialsMinter } from './testing/nats-credentials.js';
import { TEST_COMMAND_SIGNER, ensureCommandStream, publishCommand, removeServerChannel } from './testing/nats.js';
import { startReportServer, type RecordingReportServer } from './testing/report-server.js';
import { waitUntil } from './testing/wait.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const mainTs = fileURLToPath(new URL('./main.ts', import.meta.url));
const run = randomBytes(3).toString('hex');
const CREDENTIAL = `main-cred-${run}`;

interface AgentProcess {
  child: ChildProcess;
  lines: () => Array<Record<string, unknown>>;
  raw: () => string;
  exited: Promise<number | null>;
}

function startAgent(env: Record<string, string>): AgentProcess {
  const child = spawnOwned(process.execPath, ['--import', 'tsx', mainTs], {
    cwd: repoRoot,
    // The test control plane's command key, which publishCommand signs with (a test may set it to '').
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SKIFF_COMMAND_KEY: TEST_COMMAND_SIGNER.publicKey, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const lines = () =>
    out
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, lines, raw: () => out, exited };
}

const hasLine = (agent: AgentProcess, msg: string) => () => agent.lines().some((l) => l.msg === msg);

/** The seeds in a `.creds` text (the secret part), to check that they never appear in logs. */
const seedsOf = (creds: string) => creds.match(/SU[A-Z2-7]{40,}/g) ?? [];

let nc: NatsConnection;
let reports: RecordingReportServer;
const dirs: string[] = [];
const serverIds: string[] = [];
const services: string[] = [];
const docker = new Dockerode({ socketPath: '/var/run/docker.sock' });

beforeAll(async () => {
  nc = await connect({ servers: inject('natsUrl') });
  await ensureCommandStream(nc);
  reports = await startReportServer();
});

afterAll(async () => {
  for (const name of services) {
    await docker
      .getService(name)
      .remove()
      .catch(() => {});
  }
  for (const id of serverIds) await removeServerChannel(nc, id);
  await nc?.close();
  await reports?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
}, 60_000);

async function aDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-agent-main-'));
  dirs.push(dir);
  return dir;
}

/** The agent of `serverId` with the test credential and its data in `dataDir`. */
const agentWithCredential = (serverId: string, dataDir: string) =>
  startAgent({
    SKIFF_SERVER_ID: serverId,
    SKIFF_CONTROL_PLANE_GRPC: reports.target,
    SKIFF_NATS_URL: inject('natsUrl'),
    SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
    SKIFF_AGENT_DATA_DIR: dataDir,
  });

describe('agent main', () => {
  it('consumes commands from NATS, reports to the control plane, and exits 0 on SIGTERM', async () => {
    const serverId = `m-${run}-1`;
    serverIds.push(serverId);
    const dataDir = await aDataDir();
    const credentialFile = join(dataDir, 'credential');
    await writeFile(credentialFile, `${CREDENTIAL}\n`, { mode: 0o600 });
    // NATS credentials kept from when NATS was in operator mode: the open NATS ignores them,
    // and the registration, which hands out none, removes them.
    const staleNats = await startDedicatedNats({ auth: true });
    const staleCreds = await (await agentCredentialsMinter(staleNats.authDir!))(serverId);
    await staleNats.stop();
    await storeNatsCredentials(dataDir, serverId, staleCreds);
    const agent = startAgent({
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: reports.target,
      SKIFF_NATS_URL: inject('natsUrl'),
      SKIFF_AGENT_CREDENTIAL_FILE: credentialFile,
      SKIFF_AGENT_DATA_DIR: dataDir,
    });
    try {
      await waitUntil('the consumer to start', hasLine(agent, 'consuming commands'), 20_000);
      await waitUntil('the stored NATS credentials to be removed', () => stat(join(dataDir, STORED_NATS_CREDENTIALS_FILE)).then(() => false, () => true));
      const command = Command.fromPartial({ commandId: `main-${run}-1`, serverId, kind: 42 as CommandKind, workloadKey: 'application:x' });
      await publishCommand(nc, command);
      const result = await waitUntil('the result', () => reports.results.find((r) => r.commandId === command.commandId));
      expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'unknown command kind 42' });
      expect(reports.authorizations).toContain(`Bearer ${CREDENTIAL}`);

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      expect(agent.lines().at(-1)).toMatchObject({ level: 30, msg: 'agent stopped', serverId });
      expect(agent.raw()).not.toContain(CREDENTIAL);
      for (const seed of seedsOf(staleCreds.creds)) expect(agent.raw()).not.toContain(seed);
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 60_000);

  // Two agents of one server id on one engine (two `tools/up` on one machine are both `local`):
  // the start of one removes its own leftover relay, never the one the other's restore runs through.
  it('removes at its start its own leftover throw-away containers, not those of another agent of its server id', async () => {
    const serverId = `m-${run}-twin`;
    serverIds.push(serverId);
    const [dataDir, twinDataDir] = [await aDataDir(), await aDataDir()];
    const relay = async (name: string, owner: string) => {
      const c = await docker.createContainer({ name, Image: 'busybox:latest', Cmd: ['sleep', '120'], Labels: { 'skiff.relay': name, 'skiff.agent': owner } });
      await c.start();
    };
    const [leftover, twins] = [`skiff-relay-main-own-${run}`, `skiff-relay-main-twin-${run}`];
    await relay(leftover, await throwawayOwner(dataDir, serverId));
    await relay(twins, await throwawayOwner(twinDataDir, serverId));
    const agent = agentWithCredential(serverId, dataDir);
    const exists = (name: string) => docker.getContainer(name).inspect().then(() => true, () => false);
    try {
      await waitUntil('its own leftover removed', async () => !(await exists(leftover)), 30_000);
      expect(agent.lines()).toContainEqual(expect.objectContaining({ msg: 'removed the throw-away containers of commands that will not run again', containers: [leftover] }));
      expect(await exists(twins)).toBe(true);
    } finally {
      agent.child.kill('SIGKILL');
      for (const name of [leftover, twins]) await docker.getContainer(name).remove({ force: true }).catch(() => {});
    }
  }, 60_000);

  // `remove` (every Skiff service and container of the engine) runs on a dedicated engine: second-server.e2e.test.ts.
  it.each([
    ['none', 'removing the proxy container', false],
    ['leaveRunning', 'leaving the workloads and the proxy container running', true],
  ] as const)('told by its heartbeat that the server was removed (workloads: %s): stops retrying, does what it was told and exits 0 saying why', async (workloads, action, proxyStays) => {
    const serverId = `m-${run}-removed-${workloads}`;
    serverIds.push(serverId);
    const dataDir = await aDataDir();
    const controlPlane = await startReportServer();
    controlPlane.heartbeatIntervalSeconds = 1;
    // A stand-in for this agent's proxy container, under a name of this test alone.
    const proxyName = `skiff-proxy-removed-${workloads}-${run}`;
    const container = await docker.createContainer({ name: proxyName, Image: 'busybox:latest', Cmd: ['sleep', '600'], Labels: { 'skiff.managed': 'true', 'skiff.test': 'main-removed' } });
    await container.start();
    const agent = startAgent({
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: controlPlane.target,
      SKIFF_NATS_URL: inject('natsUrl'),
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: dataDir,
      SKIFF_PROXY_CONTAINER: proxyName,
    });
    try {
      await waitUntil('the consumer to start', hasLine(agent, 'consuming commands'), 20_000);
      await waitUntil('a heartbeat', () => controlPlane.heartbeats > 0, 10_000);
      controlPlane.removed = workloads;
      expect(await agent.exited).toBe(0);
      expect(agent.lines()).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: `this server was removed from the control plane: ${action} and stopping (join it again to use it)`,
          reason: serverRemovedDetails(workloads),
        }),
      );
      const messages = agent.lines().map((l) => String(l.msg));
      expect(agent.lines().some((l) => l.msg === 'control plane did not take the call; retrying')).toBe(false);
      if (proxyStays) {
        expect(messages).toContain('workloads and the proxy container are left running, as server.remove asked');
        expect((await docker.getContainer(proxyName).inspect()).State.Running).toBe(true);
      } else {
        expect(agent.lines()).toContainEqual(expect.objectContaining({ msg: 'proxy container removed', container: proxyName }));
        expect(messages.indexOf('agent stopped: the server was removed'), messages.join(' | ')).toBeGreaterThan(messages.indexOf('proxy container removed'));
        await expect(docker.getContainer(proxyName).inspect()).rejects.toMatchObject({ statusCode: 404 });
      }
      expect(messages.at(-1)).toBe('agent stopped: the server was removed');
      expect(agent.raw()).not.toContain(CREDENTIAL);
    } finally {
      agent.child.kill('SIGKILL');
      await controlPlane.stop();
      await docker
        .getContainer(proxyName)
        .remove({ force: true })
        .catch(() => {});
    }
  }, 60_000);

  it('abandons a running deploy on SIGTERM, exits 0, and leaves it journaled as started', async () => {
    const serverId = `m-${run}-2`;
    serverIds.push(serverId);
    const appName = `skt-main-${run}`;
    services.push(appName);
    const dataDir = await aDataDir();
    const agent = agentWithCredential(serverId, dataDir);
    try {
      await waitUntil('the consumer to start', hasLine(agent, 'consuming commands'), 20_000);
      // A placement no node satisfies: the task stays pending, the deploy keeps waiting.
      const command: Command = {
        commandId: `main-${run}-2`,
        serverId,
        kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
        workloadKey: `application:${appName}`,
        deadline: timestampFromDate(new Date(Date.now() + 300_000)),
        createdAt: timestampFromDate(new Date()),
        payload: {
          $case: 'deployApplication',
          value: {
            deploymentId: `main-dep-${run}`,
            workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: appName, appName },
            image: 'busybox:latest',
            env: { SECRET_VALUE: `never-logged-${run}` },
            replicas: 1,
            forcePull: false,
            keepImages: [],
            localImage: false,
            files: [],
            specJson: JSON.stringify({
              command: 'sleep 600',
              detachPlatformNetwork: true,
              placementCluster: { Constraints: [`node.labels.skiff-test-nowhere-${run}==yes`] },
            }),
          },
        },
      };
      await publishCommand(nc, command);
      await waitUntil('the deploy to wait for its tasks', () =>
        reports.events.some((e) => e.commandId === command.commandId && e.logLines.some((l) => l.text.startsWith('Waiting for the new version'))),
      );

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      expect(agent.lines()).toContainEqual(expect.objectContaining({ msg: 'command abandoned as the agent stops; it runs again at the next start' }));
      expect(reports.results.find((r) => r.commandId === command.commandId)).toBeUndefined();
      const journal = (await readFile(join(dataDir, JOURNAL_FILE), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { op: string; id: string });
      expect(journal.filter((l) => l.id === command.commandId).map((l) => l.op)).toEqual(
        expect.arrayContaining(['accept', 'start']),
      );
      expect(journal.some((l) => l.op === 'finish')).toBe(false);
      expect(agent.raw()).not.toContain(`never-logged-${run}`);
      expect(agent.raw()).not.toContain(CREDENTIAL);
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 60_000);

  it('waits for the control plane (then NATS) without failing, exits 0 on SIGTERM, and logs no secret', async () => {
    const agent = startAgent({
      SKIFF_SERVER_ID: 'srv_main_test',
      SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:1',
      SKIFF_NATS_URL: 'nats://agent:hunter2@127.0.0.1:1',
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: await aDataDir(),
    });
    try {
      await waitUntil('the start log line', hasLine(agent, 'agent starting: registering with the control plane'), 15_000);
      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const started = agent.lines().find((l) => l.msg === 'agent starting: registering with the control plane');
      expect(started).toMatchObject({ level: 30, serverId: 'srv_main_test' });
      expect(agent.raw()).not.toContain('hunter2');
      expect(agent.raw()).not.toContain(CREDENTIAL);
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 30_000);

  it('exits 1 and names the missing variables when configuration is invalid', async () => {
    const agent = startAgent({});
    expect(await agent.exited).toBe(1);
    expect(agent.lines()).toContainEqual(
      expect.objectContaining({
        level: 60,
        msg: 'invalid configuration',
        issues: expect.arrayContaining(['SKIFF_SERVER_ID is required', 'SKIFF_NATS_URL is required']),
      }),
    );
  }, 30_000);

  it('exits 1 naming the ways to get a credential when it has none (no token, none stored)', async () => {
    const agent = startAgent({
      SKIFF_SERVER_ID: 'srv_main_test',
      SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:1',
      SKIFF_NATS_URL: 'nats://127.0.0.1:1',
      SKIFF_AGENT_DATA_DIR: await aDataDir(),
    });
    expect(await agent.exited).toBe(1);
    expect(agent.lines()).toContainEqual(
      expect.objectContaining({ level: 60, msg: 'cannot start', problem: expect.stringContaining('no credential: set SKIFF_JOIN_TOKEN') }),
    );
  }, 30_000);

  it('exits 1 without a command key to verify commands with (none given, none pinned)', async () => {
    const agent = startAgent({
      SKIFF_SERVER_ID: 'srv_main_test',
      SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:1',
      SKIFF_NATS_URL: 'nats://127.0.0.1:1',
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: await aDataDir(),
      SKIFF_COMMAND_KEY: '',
    });
    expect(await agent.exited).toBe(1);
    expect(agent.lines()).toContainEqual(
      expect.objectContaining({ level: 60, msg: 'cannot start', problem: expect.stringContaining('no command key: set SKIFF_COMMAND_KEY') }),
    );
  }, 30_000);

  it('refuses a credential file that others can read, without printing it', async () => {
    const dataDir = await aDataDir();
    const credentialFile = join(dataDir, 'credential');
    await writeFile(credentialFile, CREDENTIAL);
    await chmod(credentialFile, 0o644);
    const agent = startAgent({
      SKIFF_SERVER_ID: 'srv_main_test',
      SKIFF_CONTROL_PLANE_GRPC: '127.0.0.1:1',
      SKIFF_NATS_URL: 'nats://127.0.0.1:1',
      SKIFF_AGENT_CREDENTIAL_FILE: credentialFile,
      SKIFF_AGENT_DATA_DIR: dataDir,
    });
    expect(await agent.exited).toBe(1);
    expect(agent.lines()).toContainEqual(
      expect.objectContaining({ level: 60, msg: 'cannot start', problem: expect.stringContaining('is readable by others (mode 644)') }),
    );
    expect(agent.raw()).not.toContain(CREDENTIAL);
  }, 30_000);
});

describe('agent main, NATS in operator mode', () => {
  let authNats: DedicatedNats;
  let cpNc: NatsConnection;
  let mint: AgentCredentialsMinter;

  beforeAll(async () => {
    authNats = await startDedicatedNats({ auth: true });
    const controlPlaneCreds = await readFile(join(authNats.authDir!, 'control-plane.creds'));
    cpNc = await connect({ servers: authNats.url, authenticator: credsAuthenticator(controlPlaneCreds) });
    await ensureCommandStream(cpNc);
    mint = await agentCredentialsMinter(authNats.authDir!);
  }, 60_000);

  afterAll(async () => {
    await cpNc?.close();
    await authNats?.stop();
  }, 30_000);

  const journalLines = async (dataDir: string) =>
    (await readFile(join(dataDir, JOURNAL_FILE), 'utf8'))
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { op: string; id: string; state?: string });

  it('keeps the NATS credentials of its registration, and with them resumes and consumes its commands while the control plane is down', async () => {
    const serverId = `m-${run}-op1`;
    const dataDir = await aDataDir();
    let controlPlane = await startReportServer();
    const handedOut: string[] = [];
    const issue = async (id: string) => {
      const nats = await mint(id);
      handedOut.push(nats.creds);
      return nats;
    };
    controlPlane.natsCredentials = issue;
    const env = {
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: controlPlane.target,
      SKIFF_NATS_URL: authNats.url,
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: dataDir,
    };
    const storedFile = join(dataDir, STORED_NATS_CREDENTIALS_FILE);
    const first = startAgent(env);
    let second: AgentProcess | null = null;
    try {
      await waitUntil('the consumer to start', hasLine(first, 'consuming commands'), 20_000);
      expect(first.lines().find((l) => l.msg === 'agent registered: connecting to NATS')).toBeDefined();
      const stored = JSON.parse(await waitUntil('the NATS credentials to be kept', () => readFile(storedFile, 'utf8'))) as Record<string, string>;
      expect(stored).toEqual({ serverId, creds: handedOut[0], inboxPrefix: `_INBOX_${serverId}` });
      expect((await stat(storedFile)).mode & 0o777).toBe(0o600);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      // The control plane goes down. The last run left a command unfinished in the journal,
      // and another one waits in the agent's consumer.
      const port = controlPlane.port;
      await controlPlane.stop();
      const resumedId = `main-${run}-op-resumed`;
      const waitingId = `main-${run}-op-waiting`;
      const journal = await CommandJournal.open(dataDir);
      await journal.accept(Command.fromPartial({ commandId: resumedId, serverId, kind: 42 as CommandKind, workloadKey: 'application:x' }));
      await journal.close();
      await publishCommand(cpNc, Command.fromPartial({ commandId: waitingId, serverId, kind: 43 as CommandKind, workloadKey: 'application:y' }));

      second = startAgent(env);
      const agent = second;
      await waitUntil('the agent to connect to NATS', hasLine(agent, 'agent started: connected to NATS'), 20_000);
      expect(agent.lines().map((l) => l.msg).filter((m) => String(m).startsWith('agent start'))[0]).toBe('agent starting: registering with the control plane');
      expect(agent.lines()).toContainEqual(expect.objectContaining({ msg: 'resuming commands left unfinished by the last run', count: 1 }));
      await waitUntil('both commands to be done', async () => {
        const lines = await journalLines(dataDir);
        return lines.some((l) => l.id === resumedId && l.op === 'finish') && lines.some((l) => l.id === waitingId && (l.op === 'finish' || l.op === 'entry'));
      });

      // Back up: the agent registers (new credentials, kept) and delivers the results.
      controlPlane = await startReportServer(port);
      controlPlane.natsCredentials = issue;
      await waitUntil('the registration', () => controlPlane.registrations.includes(serverId), 45_000);
      await waitUntil('the newer credentials to be kept', async () => (JSON.parse(await readFile(storedFile, 'utf8')) as { creds: string }).creds === handedOut.at(-1) && handedOut.length >= 2);
      const resumed = await waitUntil('the resumed command result', () => controlPlane.results.find((r) => r.commandId === resumedId), 45_000);
      expect(resumed.status).toBe(CommandStatus.COMMAND_STATUS_REJECTED);
      const waiting = await waitUntil('the waiting command result', () => controlPlane.results.find((r) => r.commandId === waitingId), 45_000);
      expect(waiting).toMatchObject({ status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'unknown command kind 43' });

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      for (const out of [first.raw(), agent.raw()]) {
        expect(out).not.toContain(CREDENTIAL);
        for (const creds of handedOut) for (const seed of seedsOf(creds)) expect(out).not.toContain(seed);
      }
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      await controlPlane.stop();
      await removeServerChannel(cpNc, serverId).catch(() => {});
    }
  }, 120_000);

  it('reports at its next start, once, a result it could not deliver before it stopped while the control plane was down', async () => {
    const serverId = `m-${run}-op3`;
    const dataDir = await aDataDir();
    let controlPlane = await startReportServer();
    controlPlane.natsCredentials = (id) => mint(id);
    const env = {
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: controlPlane.target,
      SKIFF_NATS_URL: authNats.url,
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: dataDir,
    };
    const agents: AgentProcess[] = [];
    const commandId = `main-${run}-op-undelivered`;
    const again = 'reporting again the results the last run could not deliver';
    try {
      const first = startAgent(env);
      agents.push(first);
      await waitUntil('the consumer to start', hasLine(first, 'consuming commands'), 20_000);

      // The control plane goes down; a command ends meanwhile, and the agent stops before it could say so.
      const port = controlPlane.port;
      await controlPlane.stop();
      await publishCommand(cpNc, Command.fromPartial({ commandId, serverId, kind: 43 as CommandKind, workloadKey: 'application:z' }));
      await waitUntil('the command to finish', async () => (await journalLines(dataDir)).some((l) => l.id === commandId && (l.op === 'finish' || l.state === 'finished')));
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(first.lines()).toContainEqual(expect.objectContaining({ msg: 'reports not delivered before the agent stopped', pending: 1 }));

      controlPlane = await startReportServer(port);
      controlPlane.natsCredentials = (id) => mint(id);
      const second = startAgent(env);
      agents.push(second);
      const result = await waitUntil('the result', () => controlPlane.results.find((r) => r.commandId === commandId), 45_000);
      expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'unknown command kind 43' });
      expect(second.lines()).toContainEqual(expect.objectContaining({ msg: again, count: 1 }));
      await waitUntil('the delivery to be journaled', async () => (await journalLines(dataDir)).some((l) => l.id === commandId && l.op === 'delivered'));
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);

      // Delivered: the next start does not send it again.
      const third = startAgent(env);
      agents.push(third);
      await waitUntil('the consumer to start', hasLine(third, 'consuming commands'), 20_000);
      expect(third.lines().some((l) => l.msg === again)).toBe(false);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      expect(controlPlane.results.filter((r) => r.commandId === commandId)).toHaveLength(1);
    } finally {
      for (const a of agents) a.child.kill('SIGKILL');
      await controlPlane.stop();
      await removeServerChannel(cpNc, serverId).catch(() => {});
    }
  }, 150_000);

  it('exits 1 telling to join again when the control plane refuses its credential, with or without kept NATS credentials', async () => {
    const controlPlane = await startReportServer();
    controlPlane.refuseRegistrationWith = status.UNAUTHENTICATED;
    try {
      for (const kept of [false, true]) {
        const serverId = `m-${run}-op-revoked-${kept}`;
        const dataDir = await aDataDir();
        if (kept) await storeNatsCredentials(dataDir, serverId, await mint(serverId));
        const agent = startAgent({
          SKIFF_SERVER_ID: serverId,
          SKIFF_CONTROL_PLANE_GRPC: controlPlane.target,
          SKIFF_NATS_URL: authNats.url,
          SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
          SKIFF_AGENT_DATA_DIR: dataDir,
        });
        try {
          expect(await agent.exited).toBe(1);
          expect(agent.lines()).toContainEqual(
            expect.objectContaining({
              level: 60,
              msg: 'registration refused: join again with a new token from server.regenerateJoinToken',
              code: 'UNAUTHENTICATED',
              reason: 'unknown server credential',
              problem: expect.stringContaining('revoked or the server was removed'),
            }),
          );
          expect(agent.raw()).not.toContain(CREDENTIAL);
        } finally {
          agent.child.kill('SIGKILL');
          await removeServerChannel(cpNc, serverId).catch(() => {});
        }
      }
    } finally {
      await controlPlane.stop();
    }
  }, 60_000);
});
