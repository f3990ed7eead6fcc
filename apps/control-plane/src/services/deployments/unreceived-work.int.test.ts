// Work an offline agent never received is settled in Postgres alone (issue 14), on a real
// Postgres and a NATS server of this file: the relay publishes to the command stream and no
// agent consumes it, so the commands wait there. The control plane withdraws them from the
// stream and ends them; a command the agent's consumer was handed (or took) stays.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { CANCEL_REASON, COMMAND_STREAM, REMOVED_REASON, commandConsumer, commandSubject } from '@skiff/domain';
import { startDedicatedNats, waitFor } from '@skiff/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let p: TestPlatform;
let nats: { url: string; stop: () => Promise<void> };
let nc: NatsConnection;
let jsm: JetStreamManager;
let environmentId: string;

beforeAll(async () => {
  nats = await startDedicatedNats();
  p = await startTestPlatform({ nats: { url: nats.url, pollMs: 100 } });
  nc = await connect({ servers: nats.url });
  jsm = await jetstreamManager(nc);
  environmentId = (await p.call('project.create', { name: 'offline' })).body.environments[0].environmentId;
});
afterAll(async () => {
  await nc?.close();
  await p?.close();
  await nats?.stop();
});
// Each test's agent consumer (if it made one) goes, and so do the messages left: the next starts from an empty stream.
afterEach(async () => {
  await jsm.consumers.delete(COMMAND_STREAM, commandConsumer('local')).catch(() => {});
  await jsm.streams.purge(COMMAND_STREAM);
});

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await p.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function anApp(extra: Record<string, unknown> = {}) {
  const a = await ok('application.create', { name: 'web', environmentId, ...extra });
  await ok('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  return a as { applicationId: string; appName: string; serverId: string | null };
}

const commandsOf = async (applicationId: string) =>
  (await p.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${applicationId}`).execute()).sort(
    (a, b) => Number(a.position) - Number(b.position),
  );
const deploymentsOf = async (applicationId: string) =>
  (await ok('deployment.all', { applicationId })) as { deploymentId: string; status: string; reason: string | null }[];
/** Messages waiting in the command stream (every one of this file's is for server local). */
const inStream = async () => (await jsm.streams.info(COMMAND_STREAM)).state.messages;

/** Deploys `count` times and waits until the relay published every command (each one copy in the stream). */
async function published(applicationId: string, count: number) {
  for (let i = 0; i < count; i++) await ok(i === 0 ? 'application.deploy' : 'application.redeploy', { applicationId });
  return waitFor(
    async () => {
      const rows = await commandsOf(applicationId);
      return rows.length >= count && rows.every((c) => c.status === 'published') ? rows : null;
    },
    { timeoutMs: 10_000, what: 'the relay to publish the commands' },
  );
}

/** The agent of server local taking its next command in (fetched; acknowledged when `ack`), as its consumer does. */
async function agentTakes(ack: boolean) {
  await jsm.consumers.add(COMMAND_STREAM, {
    durable_name: commandConsumer('local'),
    filter_subject: commandSubject('local'),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
  });
  const consumer = await jetstream(nc).consumers.get(COMMAND_STREAM, commandConsumer('local'));
  const msg = await consumer.next({ expires: 5_000 });
  if (!msg) throw new Error('no command delivered');
  if (ack) await msg.ackAck();
}

const notConnected = 'The agent of server local (the platform host) did not answer (it is not connected); nothing was changed on it';

describe('work the offline agent never received', () => {
  it('cancelDeployment ends the published deployment at once and removes its message from the stream', async () => {
    const a = await anApp();
    const [command] = await published(a.applicationId, 1);
    expect(command.streamSeqs).toHaveLength(1);
    expect(await inStream()).toBe(1);

    expect(await ok('application.cancelDeployment', { applicationId: a.applicationId })).toEqual({ deploymentIds: [command.deploymentId] });
    expect((await deploymentsOf(a.applicationId))[0]).toMatchObject({ status: 'cancelled', reason: CANCEL_REASON });
    expect((await commandsOf(a.applicationId))[0]).toMatchObject({ status: 'failed', resultReason: CANCEL_REASON, neverReceived: true });
    expect(await inStream()).toBe(0);
  });

  it('cleanQueues ends every published job at once and empties the stream of them', async () => {
    const a = await anApp();
    const commands = await published(a.applicationId, 3);
    expect(await inStream()).toBe(3);

    expect(await ok('application.cleanQueues', { applicationId: a.applicationId })).toEqual({ deploymentIds: commands.map((c) => c.deploymentId) });
    expect((await deploymentsOf(a.applicationId)).map((d) => [d.status, d.reason])).toEqual(commands.map(() => ['cancelled', REMOVED_REASON]));
    expect(await inStream()).toBe(0);
    const again = await p.call('application.cleanQueues', { applicationId: a.applicationId });
    expect(again.body.message).toBe(`Nothing waits in the queue of application ${a.appName}`);
  });

  it('application.delete removes the application at once, its queued work withdrawn (no remove is queued)', async () => {
    const a = await anApp();
    await published(a.applicationId, 1);
    expect(await inStream()).toBe(1);
    await ok('application.delete', { applicationId: a.applicationId });
    expect((await p.call('application.one', { applicationId: a.applicationId })).status).toBe(404);
    expect(await inStream()).toBe(0);
    expect((await commandsOf(a.applicationId)).map((c) => [c.kind, c.status, c.neverReceived])).toEqual([['COMMAND_KIND_DEPLOY_APPLICATION', 'failed', true]]);
  });

  it('compose.delete removes the stack at once', async () => {
    const c = await ok('compose.create', { name: 'stack', environmentId, composeFile: 'services:\n  web:\n    image: busybox:latest\n' });
    await ok('compose.deploy', { composeId: c.composeId });
    await waitFor(
      async () => {
        const rows = await p.db.selectFrom('commands').select('status').where('workloadKey', '=', `compose:${c.composeId}`).execute();
        return rows.length === 1 && rows[0].status === 'published';
      },
      { timeoutMs: 10_000, what: 'the relay to publish the deploy' },
    );
    await ok('compose.delete', { composeId: c.composeId, deleteVolumes: false });
    expect((await p.call('compose.one', { composeId: c.composeId })).status).toBe(404);
    expect(await inStream()).toBe(0);
  });

  it('server.remove is not refused once the settled application is deleted', async () => {
    const s = await ok('server.create', { name: 'gone-offline', address: '203.0.113.44' });
    const a = await anApp({ serverId: s.serverId });
    await ok('application.deploy', { applicationId: a.applicationId });
    await waitFor(async () => (await commandsOf(a.applicationId))[0]?.status === 'published', { timeoutMs: 10_000, what: 'the relay to publish the deploy' });
    expect((await p.call('server.remove', { serverId: s.serverId })).status).toBe(400);
    await ok('application.delete', { applicationId: a.applicationId });
    await ok('server.remove', { serverId: s.serverId });
  });
});

describe('work the agent may hold is not settled', () => {
  it('a command delivered to its consumer, not acknowledged: cancel says the agent did not answer, delete queues the removal', async () => {
    const a = await anApp();
    await published(a.applicationId, 1);
    await agentTakes(false);

    for (const op of ['application.cancelDeployment', 'application.cleanQueues']) {
      const r = await p.call(op, { applicationId: a.applicationId });
      expect(r.status, op).toBe(400);
      expect(r.body.message).toBe(notConnected);
    }
    expect((await deploymentsOf(a.applicationId))[0].status).toBe('queued');
    expect((await commandsOf(a.applicationId))[0]).toMatchObject({ status: 'published', neverReceived: false });
    expect(await inStream()).toBe(1);

    await ok('application.delete', { applicationId: a.applicationId });
    expect((await p.call('application.one', { applicationId: a.applicationId })).status).toBe(200);
    expect((await commandsOf(a.applicationId)).map((c) => [c.kind, c.status])).toEqual([
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'published'],
      ['COMMAND_KIND_REMOVE_WORKLOAD', expect.stringMatching(/^(pending|published)$/)],
    ]);
    // In the stream before this test ends, so the purge after it takes it: published later, it
    // would be the next test's agent's first message.
    await waitFor(async () => (await commandsOf(a.applicationId))[1]?.status === 'published', { timeoutMs: 30_000, what: 'the removal to be published' });
  });

  it('a command the agent acknowledged (gone from the work queue): not settled', async () => {
    const a = await anApp();
    await published(a.applicationId, 1);
    await agentTakes(true);
    // The work queue drops an acknowledged message just after the acknowledgement is answered.
    await waitFor(async () => (await inStream()) === 0, { timeoutMs: 30_000, what: 'the acknowledged command to leave the stream' });
    const r = await p.call('application.cancelDeployment', { applicationId: a.applicationId });
    expect(r.body.message).toBe(notConnected);
    expect((await deploymentsOf(a.applicationId))[0].status).toBe('queued');
  });

  it('cleanQueues withdraws what was never delivered and says the agent holds the rest', async () => {
    const a = await anApp();
    const [first, second] = await published(a.applicationId, 2);
    await agentTakes(false);
    const r = await p.call('application.cleanQueues', { applicationId: a.applicationId });
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`${notConnected}. 1 job(s) of application ${a.appName} that had not reached it were removed; those it holds stay queued`);
    const byId = new Map((await deploymentsOf(a.applicationId)).map((d) => [d.deploymentId, d.status]));
    expect([byId.get(first.deploymentId!), byId.get(second.deploymentId!)]).toEqual(['queued', 'cancelled']);
    expect(await inStream()).toBe(1);
  });
});

describe('NATS away', () => {
  it('cancel answers that the agent did not answer, and delete queues the removal as before (nothing can be withdrawn)', async () => {
    const own = await startDedicatedNats();
    // NATS is away for every request that waits on it: 1 s rather than 5 s each.
    const q = await startTestPlatform({ nats: { url: own.url, pollMs: 100, controlTimeoutMs: 1_000 } });
    try {
      const call = async (op: string, input: Record<string, unknown>) => q.call(op, input);
      const env = (await call('project.create', { name: 'nats-away' })).body.environments[0].environmentId;
      const a = (await call('application.create', { name: 'web', environmentId: env })).body;
      await call('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
      expect((await call('application.deploy', { applicationId: a.applicationId })).status).toBe(200);
      const key = `application:${a.applicationId}`;
      await waitFor(async () => (await q.db.selectFrom('commands').select('status').where('workloadKey', '=', key).executeTakeFirst())?.status === 'published', {
        timeoutMs: 10_000,
        what: 'the relay to publish the deploy',
      });
      await own.stop();
      const cancel = await call('application.cancelDeployment', { applicationId: a.applicationId });
      expect(cancel.status).toBe(400);
      expect(cancel.body.message).toMatch(/^The agent of server local \(the platform host\) did not answer/);
      expect((await call('application.delete', { applicationId: a.applicationId })).status).toBe(200);
      expect((await call('application.one', { applicationId: a.applicationId })).status).toBe(200);
      expect((await q.db.selectFrom('commands').select('status').where('workloadKey', '=', key).orderBy('position').execute()).map((c) => c.status)[0]).toBe('published');
    } finally {
      await q.close();
      await own.stop().catch(() => {});
    }
  }, 60_000);
});
