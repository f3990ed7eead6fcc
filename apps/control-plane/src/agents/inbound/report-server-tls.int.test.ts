// The agents' gRPC server behind TLS: it answers clients that trust the channel's CA, fails
// the handshake of those that trust another or speak in clear, join commands carry the CA,
// and the control plane refuses to listen beyond loopback without TLS.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelCredentials, Metadata, type ServiceError, credentials, status } from '@grpc/grpc-js';
import { AgentReportsClient, timestampFromDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { type ChannelTls, ensureChannelTls } from '../tls/channel-tls.js';

const credential = randomBytes(32).toString('base64url');
const dir = mkdtempSync(join(tmpdir(), 'skiff-cp-tls-'));
let tls: ChannelTls;
let other: ChannelTls;
let t: TestPlatform;

beforeAll(async () => {
  tls = ensureChannelTls(join(dir, 'tls'), ['127.0.0.1', '::1', 'localhost']);
  other = ensureChannelTls(join(dir, 'other'), ['127.0.0.1', '::1', 'localhost']);
  t = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, tls, localAgentCredential: credential });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A heartbeat with the local agent's credential through a client with these channel credentials. */
async function heartbeat(channel: ChannelCredentials): Promise<ServiceError | null> {
  const client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, channel);
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${credential}`);
  try {
    return await new Promise((resolve) =>
      client.heartbeat({ sentAt: timestampFromDate(new Date()) }, metadata, { deadline: new Date(Date.now() + 5_000) }, (err) => resolve(err)),
    );
  } finally {
    client.close();
  }
}

describe('the agents’ gRPC server with TLS', () => {
  it('answers a client that trusts the channel CA', async () => {
    expect(await heartbeat(credentials.createSsl(Buffer.from(tls.ca)))).toBeNull();
  });

  it('fails the handshake of a client that trusts another CA, or speaks in clear', async () => {
    expect((await heartbeat(credentials.createSsl(Buffer.from(other.ca))))?.code).toBe(status.UNAVAILABLE);
    expect((await heartbeat(credentials.createInsecure()))?.code).toBe(status.UNAVAILABLE);
  });

  it('gives join commands the CA to pin', async () => {
    const created = await t.call('server.create', { name: 'remote', address: '203.0.113.9' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const env = created.body.join.env as Record<string, string>;
    expect(Buffer.from(env.SKIFF_CONTROL_PLANE_CA!, 'base64').toString('utf8')).toBe(tls.ca);
    expect(created.body.join.command).toContain(`SKIFF_CONTROL_PLANE_CA='${env.SKIFF_CONTROL_PLANE_CA}'`);
  });
});

describe('listening beyond loopback', () => {
  it('is refused without TLS, naming SKIFF_GRPC_HOST', async () => {
    await expect(startTestPlatform({ grpc: { host: '0.0.0.0', port: 0 } })).rejects.toThrow(/SKIFF_GRPC_HOST is 0\.0\.0\.0, beyond loopback/);
    await expect(startTestPlatform({ grpc: { host: '::', port: 0 } })).rejects.toThrow(/SKIFF_GRPC_HOST/);
  });

  it('is allowed with TLS', async () => {
    const wide = await startTestPlatform({ grpc: { host: '0.0.0.0', port: 0 }, tls });
    try {
      expect(wide.platform.grpcPort).toBeGreaterThan(0);
    } finally {
      await wide.close();
    }
  });
});
