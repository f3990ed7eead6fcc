import { type AddressInfo, type Server, type Socket, createServer } from 'node:net';
import { AckPolicy, DeliverPolicy, RetentionPolicy, StorageType, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type NatsConnection, connect, nanos } from '@nats-io/transport-node';
import { COMMAND_STREAM, CommandSigner, CommandVerifier, commandSubject } from '@skiff/domain';
import { Command, CommandKind, WorkloadKind } from '@skiff/proto';
import { type DedicatedNats, RestartableNats, startDedicatedNats, waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import pino from 'pino';
import { CommandOutbox } from './outbox.js';
import { OutboxRelay, ensureCommandStream } from './outbox-relay.js';
import { sentSpec } from '../../testing/sent-spec.js';

/** A durable consumer of one server's commands, made by the test (the agent's own comes later). */
async function commandConsumer(nc: NatsConnection, serverId: string, name: string) {
  await ensureCommandStream(nc);
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(COMMAND_STREAM, {
    durable_name: name,
    filter_subject: commandSubject(serverId),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
  });
  return jetstream(nc).consumers.get(COMMAND_STREAM, name);
}

async function containerApp(t: TestPlatform, serverId: string | null) {
  const project = (await t.call('project.create', { name: 'relay', env: 'REGION=eu' })).body;
  const app = (
    await t.call('application.create', { name: 'web', environmentId: project.environments[0].environmentId, serverId })
  ).body;
  const saved = await t.call('application.saveContainerProvider', {
    applicationId: app.applicationId,
    containerImage: 'busybox:latest',
    username: null,
    password: null,
    registryUrl: null,
  });
  expect(saved.status).toBe(200);
  await t.call('application.update', { applicationId: app.applicationId, env: 'GREETING=hi ${{project.REGION}}', command: 'httpd -f' });
  return app as { applicationId: string; appName: string };
}

async function deploy(t: TestPlatform, applicationId: string) {
  const res = await t.call('application.deploy', { applicationId });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const command = await t.db.selectFrom('commands').selectAll().where('deploymentId', '=', res.body.deploymentId).executeTakeFirstOrThrow();
  return { deploymentId: res.body.deploymentId as string, commandId: command.id };
}

const commandRow = (t: TestPlatform, id: string) => t.db.selectFrom('commands').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('the outbox relay on the shared NATS', () => {
  let t: TestPlatform;
  let nc: NatsConnection;
  let serverId: string;
  const consumerName = `relay-test-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    t = await startTestPlatform({ nats: { url: inject('natsUrl'), pollMs: 200, republishAfterMs: 300 } });
    // Commands go to a server of this test alone, so no other test's consumer sees them.
    serverId = (await t.call('server.create', { name: 'relay-worker', address: '203.0.113.20' })).body.serverId;
    nc = await connect({ servers: inject('natsUrl') });
  });
  afterAll(async () => {
    await (await jetstreamManager(nc)).consumers.delete(COMMAND_STREAM, consumerName).catch(() => {});
    await nc?.close();
    await t?.close();
  });

  it('publishes a deploy command to the server subject with the command id as message id, once', async () => {
    const consumer = await commandConsumer(nc, serverId, consumerName);
    const app = await containerApp(t, serverId);
    const { deploymentId, commandId } = await deploy(t, app.applicationId);

    const msg = await waitFor(() => consumer.next({ expires: 2000 }), { timeoutMs: 15_000, what: 'the command message' });
    expect(msg.subject).toBe(commandSubject(serverId));
    expect(msg.headers?.get('Nats-Msg-Id')).toBe(commandId);
    // Signed with the platform's command key, for this server's subject and these bytes only.
    const header = (name: string) => msg.headers?.get(name);
    const verifier = CommandVerifier.fromText(t.platform.commandKey);
    expect(verifier.check(commandSubject(serverId), msg.data, header)).toBeNull();
    expect(verifier.check(commandSubject('another-server'), msg.data, header)).toMatch(/does not match/);
    expect(CommandVerifier.fromText(CommandSigner.generate().publicKey).check(commandSubject(serverId), msg.data, header)).toMatch(/not the pinned key/);
    const command = Command.decode(msg.data);
    expect(command).toMatchObject({
      commandId,
      serverId,
      kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
      workloadKey: `application:${app.applicationId}`,
    });
    expect(command.payload?.$case).toBe('deployApplication');
    const payload = command.payload!.$case === 'deployApplication' ? command.payload!.value : undefined;
    expect(payload).toMatchObject({
      deploymentId,
      workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: app.applicationId, appName: app.appName },
      image: 'busybox:latest',
      env: { REGION: 'eu', GREETING: 'hi eu' },
    });
    expect(sentSpec(payload!)).toMatchObject({ appName: app.appName, id: app.applicationId, command: 'httpd -f', platformNetwork: 'skiff-network', replicas: 1 });
    msg.ack();

    // Without a result the relay publishes it again; JetStream drops the repeat (same message id).
    await waitFor(async () => (await commandRow(t, commandId)).attempts >= 2, { timeoutMs: 10_000, what: 'a second publish' });
    expect((await commandRow(t, commandId)).status).toBe('published');
    expect(await consumer.next({ expires: 1000 })).toBeNull();
  });

  it('publishes commands in the order they were written', async () => {
    const name = `${consumerName}-order`;
    const other = (await t.call('server.create', { name: 'relay-order', address: '203.0.113.21' })).body.serverId as string;
    const consumer = await commandConsumer(nc, other, name);
    try {
      const app = await containerApp(t, other);
      const written: string[] = [];
      for (let i = 0; i < 5; i++) written.push((await deploy(t, app.applicationId)).commandId);
      const seen: string[] = [];
      await waitFor(
        async () => {
          const m = await consumer.next({ expires: 1000 });
          if (m) {
            seen.push(Command.decode(m.data).commandId);
            m.ack();
          }
          return seen.length === written.length;
        },
        { timeoutMs: 15_000, what: 'five commands' },
      );
      expect(seen).toEqual(written);
    } finally {
      await (await jetstreamManager(nc)).consumers.delete(COMMAND_STREAM, name).catch(() => {});
    }
  });
});

/** Holds a port and drops every connection made to it, counting them. */
async function refusingListener(): Promise<{ port: number; attempts: () => number; close: () => Promise<void> }> {
  let attempts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    attempts += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    attempts: () => attempts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the outbox relay when NATS is away', () => {
  let t: TestPlatform | undefined;
  let nats: RestartableNats | undefined;
  afterAll(async () => {
    await t?.close();
    await nats?.remove();
  });

  it('keeps commands pending while NATS is unreachable, and publishes them once it is back, also after a restart', async () => {
    const listener = await refusingListener();
    nats = await RestartableNats.create(listener.port);
    t = await startTestPlatform({ nats: { url: nats.url, pollMs: 200, backoff: { minMs: 50, maxMs: 300 } } });
    const app = await containerApp(t, null);
    const first = await deploy(t, app.applicationId);

    // The relay keeps trying (and keeps the command pending) while nothing speaks NATS there.
    await waitFor(() => listener.attempts() >= 3, { timeoutMs: 15_000, what: 'the relay to retry' });
    expect((await commandRow(t, first.commandId)).status).toBe('pending');

    await listener.close();
    await nats.start();
    await waitFor(async () => (await commandRow(t!, first.commandId)).status === 'published', { timeoutMs: 20_000, what: 'the command published' });

    let nc = await connect({ servers: nats.url });
    const consumer = await commandConsumer(nc, 'local', 'relay-restart-test');
    const m1 = await consumer.next({ expires: 3000 });
    expect(m1 && Command.decode(m1.data).commandId).toBe(first.commandId);
    m1!.ack();
    await nc.close();

    // NATS goes away after the relay was connected: the next command waits, then goes out once.
    await nats.stop();
    const second = await deploy(t, app.applicationId);
    await nats.start();
    await waitFor(async () => (await commandRow(t!, second.commandId)).status === 'published', { timeoutMs: 30_000, what: 'the second command published' });
    nc = await connect({ servers: nats.url });
    const again = await jetstream(nc).consumers.get(COMMAND_STREAM, 'relay-restart-test');
    const m2 = await again.next({ expires: 3000 });
    expect(m2 && Command.decode(m2.data).commandId).toBe(second.commandId);
    m2!.ack();
    expect(await again.next({ expires: 1000 })).toBeNull();
    await nc.close();
  }, 90_000);
});

describe('the outbox relay when NATS refuses a command', () => {
  let t: TestPlatform | undefined;
  let nats: DedicatedNats | undefined;
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await nc?.close();
    await t?.close();
    await nats?.stop();
  });

  it("ends that command alone, failed with the reason, and publishes the other workloads' and servers' commands", async () => {
    // A server whose max_payload (64 KiB) is under what the control plane accepts at queue time.
    nats = await startDedicatedNats({ maxPayload: 64 * 1024 });
    t = await startTestPlatform({ nats: { url: nats.url, pollMs: 200, backoff: { minMs: 50, maxMs: 300 } } });
    const serverA = (await t.call('server.create', { name: 'refused-a', address: '203.0.113.30' })).body.serverId as string;
    const serverB = (await t.call('server.create', { name: 'refused-b', address: '203.0.113.31' })).body.serverId as string;
    nc = await connect({ servers: nats.url });
    const onA = await commandConsumer(nc, serverA, 'refused-a');
    const onB = await commandConsumer(nc, serverB, 'refused-b');

    const big = await containerApp(t, serverA);
    await t.call('application.update', { applicationId: big.applicationId, env: `BIG=${'x'.repeat(100 * 1024)}` });
    const sameServer = await containerApp(t, serverA);
    const otherServer = await containerApp(t, serverB);
    // The refused command comes first in the outbox.
    const refused = await deploy(t, big.applicationId);
    const second = await deploy(t, sameServer.applicationId);
    const third = await deploy(t, otherServer.applicationId);

    await waitFor(async () => (await commandRow(t!, refused.commandId)).status === 'failed', { timeoutMs: 15_000, what: 'the refused command ended' });
    const ended = await commandRow(t, refused.commandId);
    expect(ended.resultReason).toMatch(/NATS refuses the command: it is \d+ bytes, over the 65536-byte maximum payload/);
    const deployment = await t.db.selectFrom('deployments').selectAll().where('id', '=', refused.deploymentId).executeTakeFirstOrThrow();
    expect(deployment.status).toBe('error');
    expect(deployment.reason).toBe(ended.resultReason);
    expect((await t.call('application.one', { applicationId: big.applicationId })).body.applicationStatus).toBe('error');

    // The other workload on the same server and the other server's command went out.
    for (const [consumer, expected] of [
      [onA, second.commandId],
      [onB, third.commandId],
    ] as const) {
      const m = await consumer.next({ expires: 10_000 });
      expect(m && Command.decode(m.data).commandId).toBe(expected);
      m!.ack();
    }
    // A consumer can see a message before the relay has recorded JetStream's acknowledgement.
    for (const c of [second, third]) {
      await waitFor(async () => (await commandRow(t!, c.commandId)).status === 'published', { timeoutMs: 10_000, what: `${c.commandId} recorded as published` });
    }

    // The refused workload's next command (its env made small again) goes out too.
    await t.call('application.update', { applicationId: big.applicationId, env: 'SMALL=1' });
    const next = await deploy(t, big.applicationId);
    const m = await onA.next({ expires: 10_000 });
    expect(m && Command.decode(m.data).commandId).toBe(next.commandId);
    m!.ack();
  }, 60_000);
});

describe('the outbox relay when one workload cannot be published for now', () => {
  let t: TestPlatform | undefined;
  let nats: DedicatedNats | undefined;
  let relay: OutboxRelay | undefined;
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await relay?.stop();
    await nc?.close();
    await t?.close();
    await nats?.stop();
  });

  it("holds back that workload alone, keeps its order, and publishes the others' commands meanwhile", async () => {
    nats = await startDedicatedNats();
    // No relay of the platform's own: the one below publishes its outbox.
    t = await startTestPlatform();
    const serverId = (await t.call('server.create', { name: 'held', address: '203.0.113.40' })).body.serverId as string;
    const held = await containerApp(t, serverId);
    const free = await containerApp(t, serverId);
    const x1 = await deploy(t, held.applicationId);
    const x2 = await deploy(t, held.applicationId);
    const y1 = await deploy(t, free.applicationId);

    // JetStream answers "insufficient resources" (503, may pass) for the held workload's commands while `failing`.
    let failing = true;
    const real = await connect({ servers: nats.url });
    const answer503 = { data: new TextEncoder().encode(JSON.stringify({ error: { code: 503, err_code: 10023, description: 'insufficient resources' } })) };
    const wrapped = new Proxy(real, {
      get(target, prop) {
        if (prop === 'request') {
          return (subject: string, data: Uint8Array, opts: unknown) =>
            failing && subject === commandSubject(serverId) && Command.decode(data).workloadKey === `application:${held.applicationId}`
              ? Promise.resolve(answer503)
              : target.request(subject, data, opts as never);
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const ended: string[] = [];
    relay = new OutboxRelay({
      db: t.db,
      outbox: new CommandOutbox(t.platform.secrets),
      signer: CommandSigner.generate(),
      connect: async () => wrapped,
      clock: () => new Date(),
      log: pino({ level: 'silent' }),
      pollMs: 100,
      backoff: { minMs: 50, maxMs: 200 },
      endUnpublishable: async (c) => void ended.push(c.id),
    });
    nc = await connect({ servers: nats.url });
    const consumer = await commandConsumer(nc, serverId, 'held-workload');
    relay.start();

    const first = await consumer.next({ expires: 10_000 });
    expect(first && Command.decode(first.data).commandId).toBe(y1.commandId);
    first!.ack();
    // The held workload's commands wait, the later one behind the earlier one; none is ended.
    await new Promise((r) => setTimeout(r, 500));
    expect((await commandRow(t, x1.commandId)).status).toBe('pending');
    expect((await commandRow(t, x2.commandId)).status).toBe('pending');
    expect(ended).toEqual([]);

    failing = false;
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const m = await consumer.next({ expires: 10_000 });
      if (m) {
        seen.push(Command.decode(m.data).commandId);
        m.ack();
      }
    }
    expect(seen).toEqual([x1.commandId, x2.commandId]);
    await real.close();
  }, 60_000);
});

describe('the command stream', () => {
  let nats: DedicatedNats | undefined;
  let nc: NatsConnection | undefined;
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('removes a command once its agent acknowledged it, and replaces an earlier stream that kept them', async () => {
    nats = await startDedicatedNats();
    nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    // As earlier versions made it: acknowledged commands stayed for 7 days.
    await jsm.streams.add({ name: COMMAND_STREAM, subjects: ['agent.*.cmd'], storage: StorageType.File, max_age: nanos(7 * 24 * 3600_000) });
    await jetstream(nc).publish(commandSubject('srv-old'), new TextEncoder().encode('old'), { msgID: 'old-1' });

    await ensureCommandStream(nc);
    const info = await jsm.streams.info(COMMAND_STREAM);
    expect(info.config).toMatchObject({ retention: RetentionPolicy.Workqueue, max_msg_size: 1024 * 1024, max_age: nanos(7 * 24 * 3600_000) });
    await ensureCommandStream(nc); // leaves a current one as it is

    const consumer = await commandConsumer(nc, 'srv-wq', 'agent-srv-wq');
    await jetstream(nc).publish(commandSubject('srv-wq'), new TextEncoder().encode('deploy'), { msgID: 'wq-1' });
    expect((await jsm.streams.info(COMMAND_STREAM)).state.messages).toBe(1);
    const msg = await consumer.next({ expires: 5_000 });
    expect(await msg!.ackAck()).toBe(true);
    await waitFor(async () => (await jsm.streams.info(COMMAND_STREAM)).state.messages === 0, { timeoutMs: 5_000, what: 'the acknowledged command to leave the stream' });
  });
});
