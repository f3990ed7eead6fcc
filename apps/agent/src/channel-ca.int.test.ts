// The agent's side of the channel's TLS: the CA it pins (given at join, kept, or a file), the
// refusal of cleartext beyond loopback, and real handshakes with a TLS report server and a
// TLS nats-server, which succeed with the pinned CA and fail with another.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { CommandStatus, timestampFromDate } from '@skiff/proto';
import { type DedicatedNats, type TestTls, makeTestTls, startDedicatedNats } from '@skiff/testing';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORED_CA_FILE, channelCa, channelSecurity } from './channel-ca.js';
import { ConfigError } from './config.js';
import { natsConnectionOptions } from './nats/connect.js';
import { ReportClient } from './reports/client.js';
import { startReportServer } from './testing/report-server.js';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
let pinned: TestTls;
let other: TestTls;
let nats: DedicatedNats;
const dirs: string[] = [];
const aDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'skiff-agent-ca-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  pinned = makeTestTls();
  other = makeTestTls();
  nats = await startDedicatedNats({ tls: { certFile: pinned.certFile, keyFile: pinned.keyFile } });
}, 60_000);
afterAll(async () => {
  await nats?.stop();
  pinned?.remove();
  other?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const issuesOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.issues];
    throw err;
  }
  return [];
};

describe('the channel without the control plane CA', () => {
  const stored = { stored: true } as const;

  it('refuses a control plane or NATS beyond loopback, naming the variable', () => {
    expect(issuesOf(() => channelSecurity({ controlPlaneGrpc: 'cp.example.com:50051', natsServers: ['nats://127.0.0.1:4222'], ca: stored }, null))).toEqual([
      expect.stringContaining('SKIFF_CONTROL_PLANE_GRPC is beyond loopback'),
    ]);
    expect(issuesOf(() => channelSecurity({ controlPlaneGrpc: 'dns:///10.0.0.5:50051', natsServers: ['nats://10.0.0.5:4222'], ca: stored }, null))).toEqual([
      expect.stringContaining('SKIFF_CONTROL_PLANE_GRPC'),
      expect.stringContaining('SKIFF_NATS_URL is beyond loopback'),
    ]);
  });

  it('uses loopback addresses and unix sockets in clear', () => {
    for (const controlPlaneGrpc of ['127.0.0.1:50051', '[::1]:50051', 'localhost:50051', 'unix:///run/skiff.sock']) {
      expect(channelSecurity({ controlPlaneGrpc, natsServers: ['nats://127.0.0.1:4222'], ca: stored }, null).describe).toEqual({ grpc: 'clear', nats: 'clear', ca: 'none' });
    }
  });
});

describe('the control plane CA', () => {
  it('given at join, is kept in the data directory and used from there afterwards', async () => {
    const dataDir = aDir();
    expect(await channelCa({ dataDir, ca: { stored: true } })).toBeNull();
    expect(await channelCa({ dataDir, ca: { pem: pinned.ca } })).toBe(pinned.ca);
    const file = join(dataDir, STORED_CA_FILE);
    expect(readFileSync(file, 'utf8')).toBe(pinned.ca);
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(await channelCa({ dataDir, ca: { stored: true } })).toBe(pinned.ca);
  });

  it('is refused when it is not a CA certificate, naming where it came from', async () => {
    const dataDir = aDir();
    await expect(channelCa({ dataDir, ca: { pem: pinned.cert } })).rejects.toThrow(/SKIFF_CONTROL_PLANE_CA is not a CA certificate/);
    const junk = join(dataDir, 'junk.pem');
    writeFileSync(junk, 'not a certificate');
    await expect(channelCa({ dataDir, ca: { file: junk } })).rejects.toThrow(/SKIFF_CA_FILE is not a PEM certificate/);
  });

  it('makes every address TLS, remote ones included', () => {
    const security = channelSecurity({ controlPlaneGrpc: 'cp.example.com:50051', natsServers: ['nats://cp.example.com:4222'], ca: { pem: pinned.ca } }, pinned.ca);
    expect(security.describe).toEqual({ grpc: 'tls', nats: 'tls', ca: 'given' });
    expect(security.nats).toEqual({ ca: pinned.ca });
  });
});

describe('reports over TLS', () => {
  const result = { commandId: 'c1', status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: timestampFromDate(new Date()) };
  const security = (ca: string) => channelSecurity({ controlPlaneGrpc: '127.0.0.1:1', natsServers: ['tls://127.0.0.1:1'], ca: { pem: ca } }, ca);

  it('reach a TLS report server with the pinned CA, and never one whose certificate another CA signed', async () => {
    const server = await startReportServer(0, pinned);
    const good = new ReportClient({ target: server.target, credential: 'cred-tls', log, channelCredentials: security(pinned.ca).grpc, retryInitialMs: 50, retryMaxMs: 200, callTimeoutMs: 2_000 });
    const bad = new ReportClient({ target: server.target, credential: 'cred-other', log, channelCredentials: security(other.ca).grpc, retryInitialMs: 50, retryMaxMs: 200, callTimeoutMs: 2_000 });
    const clear = new ReportClient({ target: server.target, credential: 'cred-clear', log, retryInitialMs: 50, retryMaxMs: 200, callTimeoutMs: 2_000 });
    try {
      good.reportResult(result);
      expect(await good.flush(10_000)).toBe(true);
      bad.reportResult({ ...result, commandId: 'c2' });
      clear.reportResult({ ...result, commandId: 'c3' });
      expect(await bad.flush(3_000)).toBe(false);
      expect(await clear.flush(1_000)).toBe(false);
      expect(server.results.map((r) => r.commandId)).toEqual(['c1']);
      expect(server.authorizations).toEqual(['Bearer cred-tls']);
    } finally {
      good.close();
      bad.close();
      clear.close();
      await server.stop();
    }
  }, 30_000);
});

describe('NATS over TLS', () => {
  const once = { waitOnFirstConnect: false, maxReconnectAttempts: 0, timeout: 5_000 } as const;

  it('connects with the pinned CA', async () => {
    const nc = await connect({ ...natsConnectionOptions([nats.url], 'tls-test', { ca: pinned.ca }), ...once });
    try {
      expect(nc.info?.tls_required).toBe(true);
      await nc.flush();
    } finally {
      await nc.close();
    }
  });

  it('fails the handshake with another CA, and without one', async () => {
    await expect(connect({ ...natsConnectionOptions([nats.url], 'tls-test', { ca: other.ca }), ...once })).rejects.toThrow();
    await expect(connect({ ...natsConnectionOptions([nats.url], 'tls-test'), ...once })).rejects.toThrow();
  });
});
