// The command consumer against its own nats-server (so the test can take NATS away and
// bring it back): it waits for the stream, survives a NATS outage and a deleted consumer,
// takes every command exactly once, and only commands the pinned control plane key signed
// for this server.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { COMMAND_STREAM, CommandSigner, CommandVerifier, commandConsumer, commandSubject } from '@skiff/domain';
import { RestartableNats } from '@skiff/testing';
import { Command, CommandKind, CommandStatus, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../agent.js';
import { DockerodeDriver } from '../docker/dockerode-driver.js';
import { ReportClient } from '../reports/client.js';
import { TEST_COMMAND_SIGNER, ensureCommandStream, publishCommand, publishRaw } from '../testing/nats.js';
import { startReportServer, type RecordingReportServer } from '../testing/report-server.js';
import { waitUntil } from '../testing/wait.js';
import { natsConnectionOptions } from '../nats/connect.js';
import { CommandJournal } from './journal.js';

const run = randomBytes(3).toString('hex');
/** The agent's warnings and errors, to check what a refusal logs. */
const warnings: string[] = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
const ENV_SECRET = `env-secret-${run}`;
const serverId = `c-${run}`;

let nats: RestartableNats;
let storeDir: string;
let reportServer: RecordingReportServer;
let admin: NatsConnection;
let agentNc: NatsConnection;
let agent: Agent;
let journal: CommandJournal;
let reports: ReportClient;

/** A deploy the handler refuses before touching Docker (a memory limit under 6 MiB). */
function aCommand(n: number): Command {
  return {
    commandId: `cc-${run}-${n}`,
    serverId,
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: 'application:consumer-test',
    deadline: timestampFromDate(new Date(Date.now() + 120_000)),
    createdAt: timestampFromDate(new Date()),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: `cc-dep-${run}-${n}`,
        workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: 'consumer-test', appName: 'consumer-test' },
        image: 'busybox:latest',
        env: { TOKEN: ENV_SECRET },
        replicas: 1,
        forcePull: false,
        keepImages: [],
        localImage: false,
        files: [],
        specJson: JSON.stringify({ memoryLimit: '1000' }),
      },
    },
  };
}

const resultsOf = (id: string) => reportServer.results.filter((r) => r.commandId === id);

beforeAll(async () => {
  nats = await RestartableNats.create();
  storeDir = await mkdtemp(join(tmpdir(), 'skiff-consumer-test-'));
  await nats.start();
  reportServer = await startReportServer();
  admin = await connect({ ...natsConnectionOptions([nats.url], 'test admin'), reconnectTimeWait: 100 });
  agentNc = await connect({ ...natsConnectionOptions([nats.url], 'test agent'), reconnectTimeWait: 100 });
  journal = await CommandJournal.open(join(storeDir, 'agent'));
  reports = new ReportClient({ target: reportServer.target, credential: 'c', log, retryInitialMs: 50, retryMaxMs: 500 });
  agent = new Agent({
    serverId,
    nc: agentNc,
    driver: new DockerodeDriver(),
    journal,
    reports,
    log,
    verifier: CommandVerifier.fromText(TEST_COMMAND_SIGNER.publicKey),
    maxConcurrentDeploys: 1,
    consumer: { retryInitialMs: 50, retryMaxMs: 300 },
  });
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  reports?.close();
  await journal?.close();
  await agentNc?.close();
  await admin?.close();
  await nats?.remove();
  await reportServer?.stop();
  await rm(storeDir, { recursive: true, force: true });
}, 60_000);

describe('CommandConsumer', () => {
  it('waits for the stream the control plane creates, then consumes', async () => {
    agent.start();
    let ready = false;
    void agent.ready().then(() => (ready = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(ready).toBe(false);
    await ensureCommandStream(admin);
    await waitUntil('the consumer to bind', () => ready, 15_000);
    await publishCommand(admin, aCommand(1));
    expect((await waitUntil('result 1', () => resultsOf(aCommand(1).commandId)[0])).status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
  });

  it('resumes after NATS goes away and comes back, taking each command once', async () => {
    await nats.stop('SIGKILL');
    await nats.start();
    await waitUntil('both clients to reconnect', async () => {
      await admin.flush();
      await agentNc.flush();
      return true;
    }, 20_000, 200);
    await publishCommand(admin, aCommand(2));
    await waitUntil('result 2', () => resultsOf(aCommand(2).commandId)[0], 60_000);
    // Re-published by the relay after the outage (a new msg id): reported, not run again.
    await publishCommand(admin, aCommand(1), `${aCommand(1).commandId}-again`);
    await waitUntil('result 1 re-reported', () => resultsOf(aCommand(1).commandId).length === 2, 30_000);
    expect(journal.get(aCommand(1).commandId)?.attempts).toBe(1);
    expect(journal.get(aCommand(2).commandId)?.attempts).toBe(1);
    expect(resultsOf(aCommand(2).commandId)).toHaveLength(1);
  }, 90_000);

  it('sets up its durable consumer again when it is deleted', async () => {
    const jsm = await jetstreamManager(admin);
    await jsm.consumers.delete(COMMAND_STREAM, commandConsumer(serverId));
    await waitUntil('the consumer to be recreated', async () => (await jsm.consumers.info(COMMAND_STREAM, commandConsumer(serverId))).name, 30_000, 200);
    await publishCommand(admin, aCommand(3));
    await waitUntil('result 3', () => resultsOf(aCommand(3).commandId)[0], 30_000);
    // Acknowledged commands left the stream (a work queue): the new consumer gets none of them again.
    expect(resultsOf(aCommand(2).commandId)).toHaveLength(1);
    expect((await jsm.streams.info(COMMAND_STREAM)).state.messages).toBe(0);
    for (const n of [1, 2, 3]) expect(journal.get(aCommand(n).commandId)?.attempts).toBe(1);
  }, 90_000);
});

describe('signed commands', () => {
  const refusals = () => warnings.filter((l) => l.includes('command message refused'));

  it('runs only what the pinned key signed for this server, refusing the rest without a trace in the journal or the reports', async () => {
    const before = refusals().length;
    const unsigned = aCommand(10);
    await publishCommand(admin, unsigned, unsigned.commandId, 'unsigned');
    const otherKey = aCommand(11);
    await publishCommand(admin, otherKey, otherKey.commandId, CommandSigner.generate());
    // Signed for another server's subject (a command of that server replayed to this one).
    const otherServer = aCommand(12);
    await publishCommand(admin, otherServer, otherServer.commandId, { signer: TEST_COMMAND_SIGNER, subject: commandSubject(`other-${run}`) });
    // Signed, then changed on the way.
    const altered = aCommand(13);
    const original = Command.encode({ ...altered, workloadKey: 'application:elsewhere' }).finish();
    const signature = headers();
    for (const [name, value] of Object.entries(TEST_COMMAND_SIGNER.sign(commandSubject(serverId), original))) signature.set(name, value);
    await jetstream(admin).publish(commandSubject(serverId), Command.encode(altered).finish(), { msgID: altered.commandId, headers: signature });
    // Unsigned bytes of an unknown kind: refused before they are decoded, so not even "rejected" is reported.
    await publishRaw(admin, serverId, new Uint8Array([1, 2, 3]), `raw-${run}`, 'unsigned');
    // Then a signed one: once its result is in, everything before it was taken (one message at a time, in order).
    const good = aCommand(14);
    await publishCommand(admin, good, good.commandId);
    expect((await waitUntil('the signed command ran', () => resultsOf(good.commandId)[0], 30_000)).status).toBe(CommandStatus.COMMAND_STATUS_FAILED);

    for (const c of [unsigned, otherKey, otherServer, altered]) {
      expect(resultsOf(c.commandId), c.commandId).toEqual([]);
      expect(journal.get(c.commandId), c.commandId).toBeUndefined();
    }
    expect(journal.get(`raw-${run}`)).toBeUndefined();
    const refused = refusals().slice(before);
    expect(refused).toHaveLength(5);
    expect(refused.join('\n')).toMatch(/unsigned/);
    expect(refused.join('\n')).toMatch(/not the pinned key/);
    expect(refused.join('\n')).toMatch(/does not match/);
    // Logged without the payload.
    expect(warnings.join('\n')).not.toContain(ENV_SECRET);
    // Terminated, not redelivered: nothing waits for an ack.
    const jsm = await jetstreamManager(admin);
    await waitUntil('no message waiting for an ack', async () => {
      const info = await jsm.consumers.info(COMMAND_STREAM, commandConsumer(serverId));
      return info.num_ack_pending === 0 && info.num_pending === 0;
    }, 10_000, 100);
    expect(refusals().slice(before)).toHaveLength(5);
  }, 60_000);
});
