// The agent program as a process: started with `node --import tsx main.ts`, against the
// test NATS server and an in-test gRPC report server, or against nothing at all.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Command, CommandKind, CommandStatus, WorkloadKind, timestampFromDate } from '@skiff/proto';
import Dockerode from 'dockerode';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOURNAL_FILE } from './commands/journal.js';
import { ensureCommandStream, publishCommand, removeServerChannel } from './testing/nats.js';
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
  const child = spawn(process.execPath, ['--import', 'tsx', mainTs], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
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

describe('agent main', () => {
  it('consumes commands from NATS, reports to the control plane, and exits 0 on SIGTERM', async () => {
    const serverId = `m-${run}-1`;
    serverIds.push(serverId);
    const dataDir = await aDataDir();
    const credentialFile = join(dataDir, 'credential');
    await writeFile(credentialFile, `${CREDENTIAL}\n`, { mode: 0o600 });
    const agent = startAgent({
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: reports.target,
      SKIFF_NATS_URL: inject('natsUrl'),
      SKIFF_AGENT_CREDENTIAL_FILE: credentialFile,
      SKIFF_AGENT_DATA_DIR: dataDir,
    });
    try {
      await waitUntil('the consumer to start', hasLine(agent, 'consuming commands'), 20_000);
      const command = Command.fromPartial({ commandId: `main-${run}-1`, serverId, kind: 42 as CommandKind, workloadKey: 'application:x' });
      await publishCommand(nc, command);
      const result = await waitUntil('the result', () => reports.results.find((r) => r.commandId === command.commandId));
      expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'unknown command kind 42' });
      expect(reports.authorizations).toContain(`Bearer ${CREDENTIAL}`);

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      expect(agent.lines().at(-1)).toMatchObject({ level: 30, msg: 'agent stopped', serverId });
      expect(agent.raw()).not.toContain(CREDENTIAL);
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 60_000);

  it('abandons a running deploy on SIGTERM, exits 0, and leaves it journaled as started', async () => {
    const serverId = `m-${run}-2`;
    serverIds.push(serverId);
    const appName = `skt-main-${run}`;
    services.push(appName);
    const dataDir = await aDataDir();
    const agent = startAgent({
      SKIFF_SERVER_ID: serverId,
      SKIFF_CONTROL_PLANE_GRPC: reports.target,
      SKIFF_NATS_URL: inject('natsUrl'),
      SKIFF_AGENT_CREDENTIAL: CREDENTIAL,
      SKIFF_AGENT_DATA_DIR: dataDir,
    });
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
