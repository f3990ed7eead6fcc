// Stop, start, reload and remove through the whole agent: commands published on the test
// NATS server's JetStream, run in the order they came (one workload's FIFO) against the
// real engine, their results reported to an in-test AgentReports gRPC server.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CommandStatus } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent } from '../agent.js';
import { ReportClient } from '../reports/client.js';
import { ensureCommandStream, publishCommand, removeServerChannel } from '../testing/nats.js';
import { startReportServer, type RecordingReportServer } from '../testing/report-server.js';
import { startTestAgent } from '../testing/test-agent.js';
import { TestServices } from '../testing/swarm-services.js';
import { waitUntil } from '../testing/wait.js';
import { CommandJournal } from '../pipeline/journal.js';

const t = new TestServices('skt-wlc');
const serverId = `t-wlc-${t.run}`;
let nc: NatsConnection;
let reportServer: RecordingReportServer;
let dir: string;
let agent: Agent;
let journal: CommandJournal;
let reports: ReportClient;

beforeAll(async () => {
  nc = await connect({ servers: inject('natsUrl') });
  await ensureCommandStream(nc);
  reportServer = await startReportServer();
  dir = await mkdtemp(join(tmpdir(), 'skiff-wlc-'));
  ({ agent, journal, reports } = await startTestAgent({
    serverId,
    nc,
    driver: t.driver,
    journalDir: dir,
    reportTarget: reportServer.target,
    credential: 'wlc',
    log: t.log,
    maxConcurrentDeploys: 1,
    workload: { pollIntervalMs: 200 },
  }));
});

afterAll(async () => {
  await agent?.stop();
  await reports?.flush(5_000);
  reports?.close();
  await journal?.close();
  await removeServerChannel(nc, serverId);
  await nc?.close();
  await reportServer?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
  await t.cleanUp();
}, 60_000);

describe('workload commands through the agent', () => {
  it('runs stop, start, reload and remove of one workload in the order they were sent', async () => {
    const svc = await t.create({ replicas: 2 });
    const commands = (['stopWorkload', 'startWorkload', 'reloadWorkload', 'removeWorkload'] as const).map((c) =>
      t.command(c, svc, { serverId }),
    );
    for (const command of commands) await publishCommand(nc, command);
    const ids = commands.map((c) => c.commandId);
    await waitUntil('four results', () => ids.every((id) => reportServer.results.some((r) => r.commandId === id)), 90_000, 200);
    const results = reportServer.results.filter((r) => ids.includes(r.commandId));
    expect(results.map((r) => r.commandId)).toEqual(ids);
    expect(results.map((r) => [r.status, r.reason])).toEqual(ids.map(() => [CommandStatus.COMMAND_STATUS_SUCCEEDED, '']));
    expect(await t.spec(svc.name)).toBeNull();
  }, 120_000);

  it('rejects a command whose workload is missing, without touching anything', async () => {
    const command = t.command('stopWorkload', { name: 'x', id: '' }, { serverId });
    await publishCommand(nc, command);
    const result = await waitUntil('the rejection', () => reportServer.results.find((r) => r.commandId === command.commandId), 30_000);
    expect(result).toMatchObject({ status: CommandStatus.COMMAND_STATUS_REJECTED, reason: 'workload (with app_name and id) is missing' });
  });
});
