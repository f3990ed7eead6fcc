// The control responder on the shared NATS: it carries out only control requests the pinned
// control plane key signed for this server's control subject, recently; everything else is
// answered with a refusal and never reaches the handler. The handler here records what it is
// given (the command control behind it is tested in command-control.int.test.ts).
import { randomBytes } from 'node:crypto';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { CommandSigner, CommandVerifier, controlSubject } from '@skiff/domain';
import { ControlReply, ControlRequest } from '@skiff/proto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TEST_COMMAND_SIGNER, requestControl } from '../testing/nats.js';
import { ControlResponder } from './responder.js';

const run = randomBytes(3).toString('hex');
const serverId = `ctl-${run}`;
const warnings: string[] = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
const handled: ControlRequest[] = [];
const cancel = (workloadKey: string): ControlRequest => ({
  request: { $case: 'cancelWorkload', value: { workloadKey, deploymentId: '', buildOnly: false, commandId: '' } },
});
const clean = (workloadKey: string): ControlRequest => ({ request: { $case: 'cleanQueue', value: { workloadKey, commandIds: [] } } });

let nc: NatsConnection;
let responder: ControlResponder;

beforeAll(async () => {
  nc = await connect({ servers: inject('natsUrl') });
  responder = new ControlResponder({
    nc,
    serverId,
    verifier: CommandVerifier.fromText(TEST_COMMAND_SIGNER.publicKey),
    log,
    control: {
      handle: (request) => {
        handled.push(request);
        return { commandIds: ['done'], error: '' };
      },
    },
  });
  await responder.start();
});

afterAll(async () => {
  await responder?.stop();
  await nc?.close();
});

/** Sends `request` with the signature headers of `signedAs` (what was signed, for which subject, when). */
async function sendSignedAs(request: ControlRequest, signedAs: { request: ControlRequest; subject?: string; at?: Date }): Promise<ControlReply> {
  const h = headers();
  const signed = TEST_COMMAND_SIGNER.sign(signedAs.subject ?? controlSubject(serverId), ControlRequest.encode(signedAs.request).finish(), signedAs.at);
  for (const [name, value] of Object.entries(signed)) h.set(name, value);
  const msg = await nc.request(controlSubject(serverId), ControlRequest.encode(request).finish(), { timeout: 5_000, headers: h });
  return ControlReply.decode(msg.data);
}

describe('control requests', () => {
  it('carries out one signed by the pinned key for this server', async () => {
    const reply = await requestControl(nc, serverId, cancel('application:a'));
    expect(reply).toEqual({ commandIds: ['done'], error: '' });
    expect(handled).toEqual([cancel('application:a')]);
  });

  it('refuses one unsigned, signed by another key, for another server, altered, or signed long ago, and carries out none', async () => {
    handled.length = 0;
    const before = warnings.length;
    const replies = [
      await requestControl(nc, serverId, cancel('application:b'), { signing: 'unsigned' }),
      await requestControl(nc, serverId, cancel('application:b'), { signing: CommandSigner.generate() }),
      await sendSignedAs(cancel('application:b'), { request: cancel('application:b'), subject: controlSubject(`other-${run}`) }),
      // A signed cancel turned into a queue cleaning, or aimed at another workload.
      await sendSignedAs(clean('application:b'), { request: cancel('application:b') }),
      await sendSignedAs(cancel('application:c'), { request: cancel('application:b') }),
      // A recorded request replayed later.
      await sendSignedAs(cancel('application:b'), { request: cancel('application:b'), at: new Date(Date.now() - 10 * 60_000) }),
    ];
    expect(handled).toEqual([]);
    for (const reply of replies) {
      expect(reply.commandIds).toEqual([]);
      expect(reply.error).toMatch(/^the agent refused the request: /);
    }
    expect(replies.map((r) => r.error)).toEqual([
      expect.stringContaining('unsigned'),
      expect.stringContaining('not the pinned key'),
      expect.stringContaining('does not match'),
      expect.stringContaining('does not match'),
      expect.stringContaining('does not match'),
      expect.stringContaining("more than 300 s from this agent's clock"),
    ]);
    const logged = warnings.slice(before);
    expect(logged.filter((l) => l.includes('control request refused'))).toHaveLength(6);
    // Without the payload.
    expect(logged.join('\n')).not.toContain('application:b');
  });
});
