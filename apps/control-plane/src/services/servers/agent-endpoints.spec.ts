import { describe, expect, it } from 'vitest';
import { agentEndpoints } from './servers.js';

describe('agentEndpoints (the addresses join commands carry)', () => {
  it("never hands out the login in the control plane's own NATS URL", () => {
    const endpoints = agentEndpoints({ nats: { url: 'nats://skiff:s3cret@10.0.0.1:4222,nats://a:b@10.0.0.2:4222' }, grpc: { host: '10.0.0.1' } }, () => 50051)();
    expect(endpoints).toEqual({ grpc: '10.0.0.1:50051', nats: 'nats://10.0.0.1:4222,nats://10.0.0.2:4222' });
    expect(agentEndpoints({ agents: { natsUrl: 'tls://u:p@nats.example.com' } }, () => undefined)().nats).toBe('tls://nats.example.com');
  });

  it('puts the public address in place of a wildcard listen address', () => {
    expect(agentEndpoints({ grpc: { host: '0.0.0.0' }, publicIp: '203.0.113.7' }, () => 50051)().grpc).toBe('203.0.113.7:50051');
  });
});
