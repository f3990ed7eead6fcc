/**
 * Container requests and log streams through NATS to a real agent, against the real engine:
 * a Skiff-labelled busybox container printing a line to stdout and one to stderr every 200
 * ms, and a container of the same kind without Skiff's labels (not listed, not inspected,
 * never restarted or read). Log chunks are taken from the stream subject as the control plane
 * takes them; a reader that goes away ends the agent's stream. Containers carry this run's
 * name and are removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { logStreamSubject } from '@skiff/domain';
import { ContainerOperation, type ContainerRequest, LogChunk, type LogsRequest } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Agent } from '../agent.js';
import { DockerodeContainerOps } from '../docker/container-ops.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { ensureCommandStream, requestControl } from '../testing/nats.js';
import { startReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { waitUntil } from '../testing/wait.js';

const run = randomBytes(3).toString('hex');
const serverId = `srv-cc-${run}`;
const ours = `cc-ours-${run}`;
const foreign = `cc-foreign-${run}`;
const appId = `app-cc-${run}`;
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const docker = (...args: string[]) => execFileSync('/usr/bin/docker', args, { encoding: 'utf8' }).trim();
// Exits on SIGTERM (a shell as PID 1 ignores it otherwise): a restart or removal does not wait out the engine's 10 s stop timeout.
const LOOP = 'trap "exit 0" TERM; i=0; while true; do i=$((i+1)); echo "line $i"; echo "err $i" >&2; sleep 0.2; done';

let nc: NatsConnection;
let reader: NatsConnection;
let agent: Agent;
let stopAgent: () => Promise<void>;

const ask = (fields: Partial<ContainerRequest>) =>
  requestControl(nc, serverId, { request: { $case: 'container', value: { operation: 0, containerId: '', expectKind: '', expectId: '', ...fields } } });

const logsRequest = (fields: Partial<LogsRequest>): LogsRequest => ({
  streamId: `s${randomBytes(8).toString('hex')}`,
  serviceName: '',
  containerId: ours,
  tail: 0,
  sinceUnix: '0',
  follow: false,
  maxBytes: '1000000',
  maxLinesPerSecond: 1000,
  maxDurationMs: 60_000,
  expectKind: 'application',
  expectId: appId,
  ...fields,
});

/** Reads a stream as the control plane does: answers each chunk until `keep` says stop (then goes away) or the stream ends. */
async function readStream(request: LogsRequest, keep: (chunks: LogChunk[]) => boolean = () => true) {
  const sub = reader.subscribe(logStreamSubject(serverId, request.streamId));
  await reader.flush();
  const reply = await requestControl(nc, serverId, { request: { $case: 'logs', value: request } });
  expect(reply.error).toBe('');
  const chunks: LogChunk[] = [];
  for await (const msg of sub as AsyncIterable<Msg>) {
    const chunk = LogChunk.decode(msg.data);
    chunks.push(chunk);
    if (chunk.end || !keep(chunks)) break;
    msg.respond(new Uint8Array(0));
  }
  sub.unsubscribe();
  return { chunks, lines: chunks.flatMap((c) => c.lines), last: chunks.at(-1)! };
}

/** The test agent's journal folder, removed at the end. */
let journalDir: string | undefined;

beforeAll(async () => {
  for (const [name, labels] of [
    [ours, ['--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', `skiff.id=${appId}`]],
    [foreign, ['--label', `cc.run=${run}`]],
  ] as const) {
    docker('run', '-d', '--name', name, ...labels, 'busybox:latest', 'sh', '-c', LOOP);
  }
  nc = await connect({ servers: inject('natsUrl') });
  reader = await connect({ servers: inject('natsUrl') });
  await ensureCommandStream(nc);
  const reportServer = await startReportServer();
  const started = await startTestAgent({
    serverId,
    nc,
    driver: new DockerodeDriver(),
    containers: new DockerodeContainerOps(new Dockerode()),
    logStreams: { heartbeatMs: 300, batchMs: 50, chunkTimeoutMs: 2_000, presenceMs: 500 },
    journalDir: (journalDir = mkdtempSync(join(tmpdir(), 'skiff-cc-'))),
    reportTarget: reportServer.target,
    credential: `cred-${run}`,
    log,
    maxConcurrentDeploys: 1,
  });
  agent = started.agent;
  stopAgent = async () => {
    await agent.stop();
    started.reports.close();
    await started.journal.close();
    await reportServer.stop();
  };
}, 60_000);

afterAll(async () => {
  await stopAgent?.();
  if (journalDir) rmSync(journalDir, { recursive: true, force: true });
  await nc?.close();
  await reader?.close();
  for (const name of [ours, foreign]) {
    try {
      docker('rm', '-f', name);
    } catch {
      // never created
    }
  }
});

describe('container requests', () => {
  it("lists Skiff's containers only, with their labels and state", async () => {
    const reply = await ask({ operation: ContainerOperation.CONTAINER_OPERATION_LIST });
    expect(reply.error).toBe('');
    const listed = JSON.parse(reply.container!.resultJson) as Array<{ name: string; state: string; labels: Record<string, string> }>;
    const mine = listed.find((c) => c.name === ours);
    expect(mine).toMatchObject({ state: 'running', labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': appId } });
    expect(listed.map((c) => c.name)).not.toContain(foreign);
  });

  it('inspects a Skiff container; one that is not Skiff\'s does not exist', async () => {
    const found = await ask({ operation: ContainerOperation.CONTAINER_OPERATION_INSPECT, containerId: ours });
    expect(JSON.parse(found.container!.resultJson)).toMatchObject({ Name: `/${ours}`, Config: { Labels: { 'skiff.id': appId } } });
    const refused = await ask({ operation: ContainerOperation.CONTAINER_OPERATION_INSPECT, containerId: foreign });
    expect(refused.container?.notFound).toBe(true);
    expect(refused.container?.resultJson).toBe('');
  });

  it("restarts only a Skiff container of the expected workload", async () => {
    const startedAt = (name: string) => docker('inspect', '-f', '{{.State.StartedAt}}', name);
    const before = { ours: startedAt(ours), foreign: startedAt(foreign) };
    const other = await ask({ operation: ContainerOperation.CONTAINER_OPERATION_RESTART, containerId: ours, expectKind: 'application', expectId: 'app-other' });
    expect(other.container?.notFound).toBe(true);
    const notSkiffs = await ask({ operation: ContainerOperation.CONTAINER_OPERATION_RESTART, containerId: foreign, expectKind: 'application', expectId: appId });
    expect(notSkiffs.container?.notFound).toBe(true);
    expect(startedAt(ours)).toBe(before.ours);
    expect(startedAt(foreign)).toBe(before.foreign);
    const done = await requestControl(
      nc,
      serverId,
      { request: { $case: 'container', value: { operation: ContainerOperation.CONTAINER_OPERATION_RESTART, containerId: ours, expectKind: 'application', expectId: appId } } },
      { timeoutMs: 20_000 },
    );
    expect(done.error).toBe('');
    expect(startedAt(ours)).not.toBe(before.ours);
    expect(docker('inspect', '-f', '{{.State.Running}}', ours)).toBe('true');
  }, 30_000);
});

describe('log streams', () => {
  it('sends the last lines of stdout and stderr, then ends', async () => {
    await waitUntil('the container to log', () => docker('logs', '--tail', '8', ours).length > 0, 10_000);
    const { lines, last } = await readStream(logsRequest({ tail: 6 }));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThanOrEqual(6);
    expect(lines.some((l) => l.stderr && /^err \d+$/.test(l.text))).toBe(true);
    expect(lines.some((l) => !l.stderr && /^line \d+$/.test(l.text))).toBe(true);
    expect(last).toMatchObject({ end: true, reason: 'end of log' });
  });

  it('follows new lines, and stops reading the log when its reader goes away', async () => {
    const { lines } = await readStream(logsRequest({ follow: true }), (chunks) => chunks.flatMap((c) => c.lines).length < 6);
    expect(lines.length).toBeGreaterThanOrEqual(6);
    await waitUntil('the agent to stop the stream', () => agent.logStreams!.active === 0, 10_000);
  }, 20_000);

  it('ends at its byte limit, and holds lines above the rate limit for the next second', async () => {
    const capped = await readStream(logsRequest({ tail: 50, maxBytes: '40' }));
    expect(capped.last.reason).toMatch(/^limit: 40 bytes/);
    expect(capped.lines.reduce((n, l) => n + l.text.length + 1, 0)).toBeLessThanOrEqual(40);
    const started = Date.now();
    const slow = await readStream(logsRequest({ tail: 6, maxLinesPerSecond: 2 }));
    expect(slow.lines).toHaveLength(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
  }, 20_000);

  it('ends at its longest duration', async () => {
    const { last } = await readStream(logsRequest({ follow: true, maxDurationMs: 700 }));
    expect(last.reason).toMatch(/^limit: the stream lasted its longest/);
  });

  it('ends a followed service log within seconds of the service being removed, saying why', async () => {
    const service = `cc-svc-${run}`;
    docker('service', 'create', '--detach', '--name', service, '--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', `skiff.id=${appId}`, 'busybox:latest', 'sh', '-c', LOOP);
    try {
      let removedAt = 0;
      const { last } = await readStream(logsRequest({ serviceName: service, containerId: '', follow: true, maxDurationMs: 20_000 }), (chunks) => {
        if (removedAt === 0 && chunks.some((c) => c.lines.length > 0)) {
          docker('service', 'rm', service);
          removedAt = Date.now();
        }
        return true;
      });
      expect(last).toMatchObject({ end: true, reason: `the service ${service} was removed` });
      expect(Date.now() - removedAt).toBeLessThan(5_000);
    } finally {
      try {
        docker('service', 'rm', service);
      } catch {
        // removed by the test
      }
    }
    await waitUntil('the agent to end the stream', () => agent.logStreams!.active === 0, 5_000);
  }, 60_000);

  it('ends a followed container log when the container is removed, saying why', async () => {
    const gone = `cc-gone-${run}`;
    const id = docker('run', '-d', '--name', gone, '--label', 'skiff.managed=true', '--label', 'skiff.kind=application', '--label', `skiff.id=${appId}`, 'busybox:latest', 'sh', '-c', LOOP);
    try {
      let removed = false;
      const { last } = await readStream(logsRequest({ containerId: id, follow: true }), (chunks) => {
        if (!removed && chunks.some((c) => c.lines.length > 0)) {
          docker('rm', '-f', gone);
          removed = true;
        }
        return true;
      });
      expect(last).toMatchObject({ end: true, reason: `the container ${id} was removed` });
    } finally {
      try {
        docker('rm', '-f', gone);
      } catch {
        // removed by the test
      }
    }
  }, 30_000);

  it("refuses a target that is not Skiff's, or not the expected workload's", async () => {
    for (const request of [logsRequest({ containerId: foreign }), logsRequest({ expectId: 'app-other' }), logsRequest({ serviceName: 'x', containerId: '' })]) {
      const reply = await requestControl(nc, serverId, { request: { $case: 'logs', value: request } });
      expect(reply.error).toMatch(/no Skiff (container|service)/);
    }
    expect(agent.logStreams!.active).toBe(0);
  });
});
