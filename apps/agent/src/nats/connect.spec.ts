import { describe, expect, it } from 'vitest';
import { natsConnectionOptions } from './connect.js';

describe('natsConnectionOptions', () => {
  it('moves credentials out of the server URLs into user and password', () => {
    expect(natsConnectionOptions(['nats://agent:p%40ss@a.internal:4222', 'tls://b.internal:4222'], 'skiff-agent s1')).toEqual({
      servers: ['nats://a.internal:4222', 'tls://b.internal:4222'],
      name: 'skiff-agent s1',
      user: 'agent',
      pass: 'p@ss',
      waitOnFirstConnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
    });
  });

  it('sets no credentials when no URL carries any', () => {
    const options = natsConnectionOptions(['nats://127.0.0.1:4222'], 'n');
    expect(options.servers).toEqual(['nats://127.0.0.1:4222']);
    expect(options).not.toHaveProperty('user');
    expect(options).not.toHaveProperty('pass');
  });
});
