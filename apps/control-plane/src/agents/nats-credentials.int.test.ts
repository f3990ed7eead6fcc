import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, headers, type NatsConnection } from '@nats-io/transport-node';
import { COMMAND_STREAM, commandConsumer, commandSubject, controlSubject } from '@skiff/domain';
import { startDedicatedNats, type DedicatedNats } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCommandStream } from './outbound/outbox-relay.js';
import { natsCredentialIssuer, type AgentNatsCredentials } from './nats-credentials.js';

const enc = new TextEncoder();
let nats: DedicatedNats;
let controlPlane: NatsConnection;
const opened: NatsConnection[] = [];

const asAgent = async (c: AgentNatsCredentials) => {
  const nc = await connect({ servers: nats.url, authenticator: credsAuthenticator(enc.encode(c.creds)), inboxPrefix: c.inboxPrefix });
  opened.push(nc);
  return nc;
};

/** The permission errors the server sent on a connection, as "<operation> <subject>". */
const violations = (nc: NatsConnection) => {
  const seen: string[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error' && /Permissions Violation/.test(String(s.error?.message))) seen.push(String(s.error?.message));
    }
  })();
  return seen;
};

beforeAll(async () => {
  nats = await startDedicatedNats({ auth: true });
  const creds = readFileSync(join(nats.authDir!, 'control-plane.creds'));
  controlPlane = await connect({ servers: nats.url, authenticator: credsAuthenticator(creds) });
  await ensureCommandStream(controlPlane);
});

afterAll(async () => {
  for (const nc of [...opened, controlPlane]) await nc?.close().catch(() => {});
  await nats?.stop();
});

describe('NATS credentials of agents (operator mode, as tools/up runs it)', () => {
  const issuer = () => natsCredentialIssuer(readFileSync(join(nats.authDir!, 'account.nk'), 'utf8'))!;

  it('refuses connections without credentials', async () => {
    await expect(connect({ servers: nats.url, reconnect: false })).rejects.toThrow(/Authorization/i);
  });

  it("lets an agent create its durable consumer, read and acknowledge its own commands", async () => {
    const js = jetstream(controlPlane);
    await js.publish(commandSubject('srv-a'), enc.encode('deploy a'), { headers: msgId('a-1') });
    const agent = await asAgent(await issuer().forServer('srv-a'));
    const jsm = await jetstreamManager(agent);
    await jsm.consumers.add(COMMAND_STREAM, {
      durable_name: commandConsumer('srv-a'),
      filter_subject: commandSubject('srv-a'),
      ack_policy: AckPolicy.Explicit,
    });
    await jsm.consumers.info(COMMAND_STREAM, commandConsumer('srv-a'));
    const consumer = await jetstream(agent).consumers.get(COMMAND_STREAM, commandConsumer('srv-a'));
    const msg = await consumer.next({ expires: 5_000 });
    expect(new TextDecoder().decode(msg!.data)).toBe('deploy a');
    expect(await msg!.ackAck()).toBe(true);
  });

  it("refuses another server's commands, consumer and control requests, and publishing commands", async () => {
    const agent = await asAgent(await issuer().forServer('srv-b'));
    const seen = violations(agent);
    const jsm = await jetstreamManager(agent);
    await expect(
      jsm.consumers.add(COMMAND_STREAM, { durable_name: commandConsumer('srv-b'), filter_subject: commandSubject('srv-a'), ack_policy: AckPolicy.Explicit }),
    ).rejects.toThrow();
    await expect(jsm.consumers.info(COMMAND_STREAM, commandConsumer('srv-a'))).rejects.toThrow();
    agent.subscribe(controlSubject('srv-a'));
    agent.subscribe(commandSubject('srv-a'));
    agent.publish(commandSubject('srv-a'), enc.encode('forged'));
    await agent.flush();
    await expect.poll(() => seen.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    expect(seen.join('\n')).toContain(`Subscription to "${controlSubject('srv-a')}"`);
    expect(seen.join('\n')).toContain(`Publish to "${commandSubject('srv-a')}"`);
  });

  it('lets an agent answer its own control requests', async () => {
    const agent = await asAgent(await issuer().forServer('srv-c'));
    const sub = agent.subscribe(controlSubject('srv-c'));
    void (async () => {
      for await (const m of sub) m.respond(enc.encode('ok'));
    })();
    await agent.flush();
    const reply = await controlPlane.request(controlSubject('srv-c'), enc.encode('cancel'), { timeout: 5_000 });
    expect(new TextDecoder().decode(reply.data)).toBe('ok');
  });

  it('is off without an account seed', () => {
    expect(natsCredentialIssuer(null)).toBeNull();
  });
});

function msgId(id: string) {
  const h = headers();
  h.set('Nats-Msg-Id', id);
  return h;
}
