import { createHash, randomBytes } from 'node:crypto';
import { Metadata, type ServiceError, credentials, status } from '@grpc/grpc-js';
import { AgentReportsClient, type RegisterResponse, timestampFromDate } from '@skiff/proto';
import { waitFor } from '@skiff/testing';
import { CommandVerifier, SERVER_REMOVED_REASON, removedServerWorkloads, serverRemovedDetails } from '@skiff/domain';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

// Joins, credentials, heartbeats and online/offline, through the real gRPC server and the API.
// The platform's clock is the test's, so expiry and missed heartbeats need no waiting.
const HEARTBEAT_S = 10;
let now = new Date('2026-11-25T12:00:00.000Z');
const advance = (ms: number) => (now = new Date(now.getTime() + ms));
let t: TestPlatform;
let client: AgentReportsClient;

beforeAll(async () => {
  t = await startTestPlatform({
    grpc: { host: '127.0.0.1', port: 0 },
    localAgentCredential: randomBytes(32).toString('base64url'),
    agents: { heartbeatIntervalSeconds: HEARTBEAT_S, grpcAddress: 'cp.example.com:50051', natsUrl: 'nats://cp.example.com:4222' },
    clock: () => now,
  });
  client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, credentials.createInsecure());
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const auth = (credential: string) => {
  const m = new Metadata();
  m.set('authorization', `Bearer ${credential}`);
  return m;
};
const info = { agentVersion: '1.2.3', hostname: 'worker-host', dockerVersion: '20.10.24' };

function join(serverId: string, token: string): Promise<{ err: ServiceError | null; res?: RegisterResponse }> {
  return new Promise((resolve) =>
    client.register({ serverId, ...info, credential: { $case: 'joinToken', value: token } }, (err, res) => resolve({ err, res })),
  );
}
function register(serverId: string, credential: string, version = info.agentVersion): Promise<{ err: ServiceError | null; res?: RegisterResponse }> {
  return new Promise((resolve) =>
    client.register(
      { serverId, ...info, agentVersion: version, credential: { $case: 'serverCredential', value: credential } },
      auth(credential),
      (err, res) => resolve({ err, res }),
    ),
  );
}
function heartbeat(credential: string): Promise<ServiceError | null> {
  return new Promise((resolve) => client.heartbeat({ sentAt: timestampFromDate(now) }, auth(credential), (err) => resolve(err)));
}

async function newServer(name = 'worker') {
  const res = await t.call('server.create', { name, address: '203.0.113.20' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { serverId: string; status: string; join: { token: string; expiresAt: string; env: Record<string, string>; command: string } };
}
const one = async (serverId: string) => (await t.call('server.one', { serverId })).body;
const row = (serverId: string) => t.db.selectFrom('servers').selectAll().where('id', '=', serverId).executeTakeFirstOrThrow();

async function joined(name = 'worker') {
  const s = await newServer(name);
  const { err, res } = await join(s.serverId, s.join.token);
  expect(err).toBeNull();
  return { serverId: s.serverId, credential: res!.serverCredential };
}

describe('server.create and the join token', () => {
  it('answers the token and the join command once; the record is pending and keeps only a hash', async () => {
    const s = await newServer();
    expect(s.status).toBe('pending');
    expect(s.join.token).toMatch(/^sjt_[A-Za-z0-9_-]{43}$/);
    expect(s.join.expiresAt).toBe(new Date(now.getTime() + 24 * 3600_000).toISOString());
    expect(s.join.env).toEqual({
      SKIFF_SERVER_ID: s.serverId,
      SKIFF_JOIN_TOKEN: s.join.token,
      SKIFF_CONTROL_PLANE_GRPC: 'cp.example.com:50051',
      SKIFF_NATS_URL: 'nats://cp.example.com:4222',
      // The public key commands are signed with, which the agent pins.
      SKIFF_COMMAND_KEY: t.platform.commandKey,
    });
    expect(CommandVerifier.fromText(s.join.env.SKIFF_COMMAND_KEY).keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(s.join.command).toBe(
      `env SKIFF_SERVER_ID='${s.serverId}' SKIFF_JOIN_TOKEN='${s.join.token}' SKIFF_CONTROL_PLANE_GRPC='cp.example.com:50051' ` +
        `SKIFF_NATS_URL='nats://cp.example.com:4222' SKIFF_COMMAND_KEY='${t.platform.commandKey}' ` +
        `SKIFF_AGENT_DATA_DIR=/var/lib/skiff-agent node --lite-mode --max-semi-space-size=1 skiff-agent.mjs`,
    );
    const read = await one(s.serverId);
    expect(read).toMatchObject({ status: 'pending', lastSeenAt: null, joinedAt: null, agentVersion: null, joinTokenExpiresAt: s.join.expiresAt });
    expect(read.join).toBeUndefined();
    expect(JSON.stringify((await t.call('server.all')).body)).not.toContain(s.join.token);
    const stored = await row(s.serverId);
    expect(stored.joinTokenHash).toBe(sha256(s.join.token));
    const dump = await sql<{ t: string }>`select row_to_json(servers)::text as t from servers where id = ${s.serverId}`.execute(t.db);
    expect(dump.rows[0].t).not.toContain(s.join.token);
  });

  it('a join consumes the token and issues a credential the agent uses from then on', async () => {
    const s = await newServer();
    const first = await join(s.serverId, s.join.token);
    expect(first.err).toBeNull();
    expect(first.res).toMatchObject({ serverId: s.serverId, heartbeatIntervalSeconds: HEARTBEAT_S });
    const credential = first.res!.serverCredential;
    expect(credential).toMatch(/^sac_[A-Za-z0-9_-]{43}$/);
    expect((await row(s.serverId)).credentialHash).toBe(sha256(credential));
    expect(await one(s.serverId)).toMatchObject({
      status: 'online',
      lastSeenAt: now.toISOString(),
      joinedAt: now.toISOString(),
      joinTokenExpiresAt: null,
      ...info,
    });

    // Single use: a second join with the same token is refused, saying why.
    const again = await join(s.serverId, s.join.token);
    expect(again.err?.code).toBe(status.UNAUTHENTICATED);
    expect(again.err?.details).toContain('already used');
    expect((await row(s.serverId)).credentialHash).toBe(sha256(credential));

    // The credential registers (updating what the agent runs) and heartbeats.
    const registered = await register(s.serverId, credential, '1.2.4');
    expect(registered.err).toBeNull();
    expect(registered.res).toMatchObject({ serverId: s.serverId, serverCredential: '', heartbeatIntervalSeconds: HEARTBEAT_S });
    expect((await one(s.serverId)).agentVersion).toBe('1.2.4');
    expect(await heartbeat(credential)).toBeNull();
  });

  it('two agents presenting the same token at once: exactly one joins', async () => {
    const s = await newServer();
    const results = await Promise.all([join(s.serverId, s.join.token), join(s.serverId, s.join.token), join(s.serverId, s.join.token)]);
    expect(results.filter((r) => r.err === null)).toHaveLength(1);
    expect(results.filter((r) => r.err?.code === status.UNAUTHENTICATED)).toHaveLength(2);
    const winner = results.find((r) => r.err === null)!.res!.serverCredential;
    expect((await row(s.serverId)).credentialHash).toBe(sha256(winner));
  });

  it('refuses a wrong token, a token of another server and an expired token with UNAUTHENTICATED', async () => {
    const s = await newServer();
    const other = await newServer('other');
    const wrong = await join(s.serverId, `sjt_${randomBytes(32).toString('base64url')}`);
    expect(wrong.err?.code).toBe(status.UNAUTHENTICATED);
    expect(wrong.err?.details).toContain('unknown or was already used');
    const crossed = await join(s.serverId, other.join.token);
    expect(crossed.err?.code).toBe(status.UNAUTHENTICATED);
    expect(crossed.err?.details).toContain(`not for server ${s.serverId}`);
    expect((await one(other.serverId)).status).toBe('pending');

    advance(24 * 3600_000 + 1000);
    const expired = await join(s.serverId, s.join.token);
    expect(expired.err?.code).toBe(status.UNAUTHENTICATED);
    expect(expired.err?.details).toContain('expired');
    expect(await one(s.serverId)).toMatchObject({ status: 'pending', joinTokenExpiresAt: null });

    // A new token works where the expired one did not.
    const fresh = (await t.call('server.regenerateJoinToken', { serverId: s.serverId })).body;
    expect(fresh.join.token).not.toBe(s.join.token);
    expect((await join(s.serverId, fresh.join.token)).err).toBeNull();
  });

  it('re-joining with a new token replaces the credential, and the unused old token stops working', async () => {
    const s = await joined('rejoin');
    const firstToken = (await t.call('server.regenerateJoinToken', { serverId: s.serverId })).body.join.token;
    const regenerated = await t.call('server.regenerateJoinToken', { serverId: s.serverId });
    expect(regenerated.status).toBe(200);
    expect(regenerated.body.status).toBe('online');
    // Until the new token is used, the current credential keeps working.
    expect(await heartbeat(s.credential)).toBeNull();
    expect((await join(s.serverId, firstToken)).err?.code).toBe(status.UNAUTHENTICATED);
    const rejoined = await join(s.serverId, regenerated.body.join.token);
    expect(rejoined.err).toBeNull();
    const newCredential = rejoined.res!.serverCredential;
    expect(newCredential).not.toBe(s.credential);
    expect((await heartbeat(s.credential))?.code).toBe(status.UNAUTHENTICATED);
    expect(await heartbeat(newCredential)).toBeNull();
  });

  it('refuses a credential presented for another server, and tells the agent of a removed server it was removed', async () => {
    const a = await joined('a');
    const b = await joined('b');
    expect((await register(b.serverId, a.credential)).err?.code).toBe(status.PERMISSION_DENIED);
    expect((await t.call('server.remove', { serverId: a.serverId })).status).toBe(200);
    // Distinct from an unknown credential: the agent stops rather than retry (apps/agent main.ts).
    for (const err of [await heartbeat(a.credential), (await register(a.serverId, a.credential)).err]) {
      expect(err).toMatchObject({ code: status.PERMISSION_DENIED, details: SERVER_REMOVED_REASON });
    }
    expect(await t.db.selectFrom('removedServers').select('serverId').where('credentialHash', '=', sha256(a.credential)).executeTakeFirst()).toEqual({ serverId: a.serverId });
    expect((await heartbeat(`sac_${randomBytes(32).toString('base64url')}`))?.code).toBe(status.UNAUTHENTICATED);
    expect(await heartbeat(b.credential)).toBeNull();
  });

  it('tells the agent of a server removed with its workloads what to do with them', async () => {
    for (const workloads of ['remove', 'leaveRunning'] as const) {
      const s = await joined(`w-${workloads}`);
      await t.call('application.create', { name: `w ${workloads}`, environmentId: (await t.call('project.create', { name: `w ${workloads}` })).body.environments[0].environmentId, serverId: s.serverId });
      expect((await t.call('server.remove', { serverId: s.serverId, workloads })).status).toBe(200);
      expect(await heartbeat(s.credential)).toMatchObject({ code: status.PERMISSION_DENIED, details: serverRemovedDetails(workloads) });
      expect(removedServerWorkloads(serverRemovedDetails(workloads))).toBe(workloads);
    }
  });

  it('knows a server another process removed (the cache reloads after a miss)', async () => {
    const credential = `sac_${randomBytes(32).toString('base64url')}`;
    await t.db.insertInto('removedServers').values({ credentialHash: sha256(credential), serverId: 'srv_elsewhere' }).execute();
    await waitFor(async () => (await heartbeat(credential))?.details === SERVER_REMOVED_REASON, { timeoutMs: 15_000, intervalMs: 500, what: 'the removal to be found' });
  });

  it('members and other organizations cannot issue join tokens', async () => {
    const s = await newServer();
    const other = await t.call('organization.create', { name: 'Join elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    expect((await t.as(key)('server.regenerateJoinToken', { serverId: s.serverId })).status).toBe(404);
    expect((await t.call('server.regenerateJoinToken', { serverId: 'srv_missing' })).status).toBe(404);
  });
});

describe('heartbeats and status', () => {
  it('online while heartbeats come, offline after three missed intervals, online again at the next one', async () => {
    const s = await joined('beating');
    const joinedAt = now.toISOString();
    advance(HEARTBEAT_S * 1000);
    expect(await heartbeat(s.credential)).toBeNull();
    const seen = now.toISOString();
    expect(await one(s.serverId)).toMatchObject({ status: 'online', lastSeenAt: seen });
    // Stored at most once per interval: a heartbeat within it changes memory only.
    await waitFor(async () => (await row(s.serverId)).lastSeenAt?.toISOString() === seen, { what: 'last seen written' });
    advance(2000);
    expect(await heartbeat(s.credential)).toBeNull();
    expect((await one(s.serverId)).lastSeenAt).toBe(now.toISOString());
    expect((await row(s.serverId)).lastSeenAt?.toISOString()).toBe(seen);
    expect(joinedAt).not.toBe(seen);

    advance(3 * HEARTBEAT_S * 1000 + 1);
    expect(await one(s.serverId)).toMatchObject({ status: 'offline' });
    expect((await t.call('server.all')).body.find((x: { serverId: string }) => x.serverId === s.serverId).status).toBe('offline');
    expect(await heartbeat(s.credential)).toBeNull();
    expect((await one(s.serverId)).status).toBe('online');
    await waitFor(async () => (await row(s.serverId)).lastSeenAt?.toISOString() === now.toISOString(), { what: 'last seen written again' });
  });

  it('finds a credential another process recorded (the cache reloads after a miss)', async () => {
    const s = await newServer('elsewhere');
    const credential = `sac_${randomBytes(32).toString('base64url')}`;
    await t.db.updateTable('servers').set({ credentialHash: sha256(credential), joinTokenHash: null }).where('id', '=', s.serverId).execute();
    await waitFor(async () => (await heartbeat(credential)) === null, { timeoutMs: 15_000, intervalMs: 500, what: 'the credential to be found' });
  });
});
