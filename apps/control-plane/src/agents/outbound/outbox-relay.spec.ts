import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import { InvalidArgumentError, type NatsConnection, TimeoutError } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { classify } from './outbox-relay.js';

const nc = { info: { max_payload: 65536 }, isClosed: () => false, flush: () => Promise.resolve() } as unknown as NatsConnection;
const api = (status: number, errCode: number, description: string) => new JetStreamApiError({ code: status, err_code: errCode, description });

describe('what a failed publish means to the relay', () => {
  it('ends a command NATS will never take: over max_payload, or a JetStream refusal of the message', async () => {
    const tooBig = await classify(InvalidArgumentError.format('payload', 'max_payload size exceeded'), nc, 70_000, 5000);
    expect(tooBig).toEqual({ scope: 'command', reason: expect.stringMatching(/it is 70000 bytes, over the 65536-byte maximum payload/) });
    expect((await classify(new Error('nats: maximum payload exceeded'), nc, 70_000, 5000)).scope).toBe('command');
    expect(await classify(api(400, 10054, 'message size exceeds maximum allowed'), nc, 1, 5000)).toEqual({
      scope: 'command',
      reason: 'JetStream refuses the command: message size exceeds maximum allowed (error 10054)',
    });
  });

  it('holds back only the workload on a failure that may pass, and stops the pass when NATS is away for all', async () => {
    expect((await classify(api(503, 10023, 'insufficient resources'), nc, 1, 5000)).scope).toBe('workload');
    expect((await classify(api(404, 10059, 'stream not found'), nc, 1, 5000)).scope).toBe('nats');
    expect((await classify(new JetStreamError('jetstream is not enabled'), nc, 1, 5000)).scope).toBe('nats');
    expect((await classify(new Error('CONNECTION_CLOSED'), nc, 1, 5000)).scope).toBe('nats');
    // A timeout: of this message while NATS answers a ping, or of NATS itself.
    expect((await classify(new TimeoutError(), nc, 1, 5000)).scope).toBe('workload');
    const away = { ...nc, isClosed: () => false, flush: () => new Promise<void>(() => {}) } as unknown as NatsConnection;
    expect((await classify(new TimeoutError(), away, 1, 50)).scope).toBe('nats');
  });
});
