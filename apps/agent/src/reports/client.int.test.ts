// The report client against a real gRPC server on loopback.
import { status } from '@grpc/grpc-js';
import { CommandStatus, DeploymentStatus, timestampFromDate, type CommandResult, type DeploymentEvent } from '@skiff/proto';
import { freePort } from '@skiff/testing';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startReportServer, type RecordingReportServer } from '../testing/report-server.js';
import { ReportClient } from './client.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const servers: RecordingReportServer[] = [];
const clients: ReportClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) await s.stop();
});

async function aServer(port = 0): Promise<RecordingReportServer> {
  const server = await startReportServer(port);
  servers.push(server);
  return server;
}

function aClient(target: string, overrides: Partial<ConstructorParameters<typeof ReportClient>[0]> = {}): ReportClient {
  const client = new ReportClient({ target, credential: 'cred-xyz', log, retryInitialMs: 50, retryMaxMs: 500, callTimeoutMs: 2_000, ...overrides });
  clients.push(client);
  return client;
}

function anEvent(sequence: number, status = DeploymentStatus.DEPLOYMENT_STATUS_UNSPECIFIED): DeploymentEvent {
  const time = timestampFromDate(new Date());
  return { deploymentId: 'dep1', commandId: 'c1', sequence: String(sequence), status, logLines: [{ time, text: `line ${sequence}` }], reason: '', occurredAt: time };
}

const aResult = (id = 'c1'): CommandResult => ({
  commandId: id,
  status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
  reason: '',
  finishedAt: timestampFromDate(new Date()),
});

describe('ReportClient', () => {
  it('sends events then results, in order, with the bearer credential', async () => {
    const server = await aServer();
    const client = aClient(server.target);
    client.reportEvent(anEvent(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING));
    client.reportEvent(anEvent(2));
    client.reportEvent(anEvent(3, DeploymentStatus.DEPLOYMENT_STATUS_DONE));
    client.reportResult(aResult());
    expect(await client.flush(5_000)).toBe(true);
    expect(server.events.map((e) => e.sequence)).toEqual(['1', '2', '3']);
    expect(server.events[2].status).toBe(DeploymentStatus.DEPLOYMENT_STATUS_DONE);
    expect(server.results).toEqual([aResult()].map((r) => ({ ...r, finishedAt: server.results[0].finishedAt })));
    expect(new Set(server.authorizations)).toEqual(new Set(['Bearer cred-xyz']));
    expect(client.pending).toBe(0);
  });

  it('keeps reports while the control plane is down and delivers them when it comes up', async () => {
    const port = await freePort();
    const client = aClient(`127.0.0.1:${port}`);
    client.reportEvent(anEvent(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING));
    client.reportResult(aResult());
    expect(await client.flush(700)).toBe(false);
    expect(client.pending).toBe(2);
    const server = await aServer(port);
    expect(await client.flush(10_000)).toBe(true);
    expect(server.events.map((e) => e.sequence)).toEqual(['1']);
    expect(server.results.map((r) => r.commandId)).toEqual(['c1']);
  });

  it('retries while the control plane answers UNAVAILABLE or UNAUTHENTICATED', async () => {
    const server = await aServer();
    server.refuseWith = status.UNAUTHENTICATED;
    const client = aClient(server.target);
    client.reportResult(aResult());
    expect(await client.flush(400)).toBe(false);
    server.refuseWith = null;
    expect(await client.flush(5_000)).toBe(true);
    expect(server.results).toHaveLength(1);
  });

  it('drops a report the control plane refuses for good, and goes on with the next', async () => {
    const server = await aServer();
    server.refuseWith = status.INVALID_ARGUMENT;
    const client = aClient(server.target);
    client.reportEvent(anEvent(1));
    client.reportEvent(anEvent(2));
    client.reportResult(aResult('bad'));
    expect(await client.flush(5_000)).toBe(true);
    server.refuseWith = null;
    client.reportResult(aResult('good'));
    expect(await client.flush(5_000)).toBe(true);
    expect(server.results.map((r) => r.commandId)).toEqual(['good']);
    expect(server.events).toEqual([]);
  });

  it('sheds the oldest log-only events past its bound, never statuses or results', async () => {
    const port = await freePort();
    const client = aClient(`127.0.0.1:${port}`, { maxQueued: 3 });
    client.reportEvent(anEvent(1, DeploymentStatus.DEPLOYMENT_STATUS_RUNNING));
    client.reportEvent(anEvent(2));
    client.reportEvent(anEvent(3));
    client.reportResult(aResult());
    client.reportEvent(anEvent(4, DeploymentStatus.DEPLOYMENT_STATUS_DONE));
    expect(client.pending).toBe(3);
    const server = await aServer(port);
    expect(await client.flush(10_000)).toBe(true);
    expect(server.events.map((e) => e.sequence)).toEqual(['1', '4']);
    expect(server.results).toHaveLength(1);
  });

  it('takes in a backlog of results past its bound (a start after a long outage) without reading the queue again for each', async () => {
    const port = await freePort();
    const client = aClient(`127.0.0.1:${port}`, { maxQueued: 1_000 });
    client.reportEvent(anEvent(1));
    const started = performance.now();
    // Read again at each report past the bound for a log-only event to shed, 80 000 took some 8 s.
    for (let i = 0; i < 80_000; i++) client.reportResult(aResult(`c${i}`));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(client.pending).toBe(80_001);
    client.reportEvent(anEvent(2));
    expect(client.pending).toBe(80_001);
  });
});
