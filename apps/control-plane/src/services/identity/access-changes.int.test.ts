/**
 * Two control planes on one PostgreSQL database: a key, a membership or a grant changed
 * through one (or by hand in the database) is refused by the other at its very next request,
 * although the other had its principal cached, also after the listening connection was killed.
 * On PGlite (one control plane) the local clear alone does it.
 */
import { randomBytes } from 'node:crypto';
import { listenerName } from '@skiff/db';
import { waitFor } from '@skiff/testing';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlatform, type Platform } from '../../compose-root.js';
import { ACCESS_CHANNEL } from './access-changes.js';
import { addMember, apiClient, type Call, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const secretKey = randomBytes(32);
let t: TestPlatform;
let b: Platform;
let onB: (key: string) => Call;
let keyReadsOnB = 0;

beforeAll(async () => {
  t = await startTestPlatform({ secretKey });
  b = await buildPlatform({
    database: { url: t.databaseUrl!, onQuery: (text) => void (/from "api_keys"/.test(text) && keyReadsOnB++) },
    secretKey,
    log: pino({ level: 'silent' }),
    version: '0.0.0-test',
    host: { dailyCleanupTickMs: false },
    backups: { start: false },
    events: { start: false },
  });
  const { contractsByName } = await import('@skiff/contracts');
  onB = (key) => apiClient(b.app, key, (op) => contractsByName.get(op)?.method ?? 'POST');
  await waitFor(() => t.platform.accessChanges.isListening && b.accessChanges.isListening, { what: 'both control planes listening' });
});
afterAll(async () => {
  await b?.close();
  await t?.close();
});

/**
 * The key answers on B, and B takes its principal from its cache (a request reads no key). The
 * first answers may not be kept: the notification of the key's own creation can reach B after them.
 */
async function cachedOnB(key: string) {
  await waitFor(
    async () => {
      const before = keyReadsOnB;
      expect((await onB(key)('project.all')).status).toBe(200);
      return keyReadsOnB === before;
    },
    { timeoutMs: 2_000, intervalMs: 10, what: "B answering the key from its cache" },
  );
}

const keyIdOf = async (userId: string) =>
  (await t.db.selectFrom('apiKeys').select('id').where('userId', '=', userId).executeTakeFirstOrThrow()).id;

describe('two control planes on one database', () => {
  it('a key removed through A is refused by B at its next request', async () => {
    const { userId, key } = await addMember(t, `gone-key-${Date.now()}@example.com`);
    await cachedOnB(key);
    expect((await t.call('user.deleteApiKey', { apiKeyId: await keyIdOf(userId) })).status).toBe(200);
    const refused = await onB(key)('project.all');
    expect(refused.status).toBe(401);
  });

  it('a member removed through A is refused by B at their next request', async () => {
    const { userId, key } = await addMember(t, `gone-member-${Date.now()}@example.com`);
    await cachedOnB(key);
    expect((await t.call('user.remove', { userId })).status).toBe(200);
    expect((await onB(key)('project.all')).status).toBe(401);
  });

  it('a permission taken back through A is refused by B at the next request', async () => {
    const { userId, key } = await addMember(t, `narrowed-${Date.now()}@example.com`);
    const projectId = (await t.call('project.create', { name: `granted-${Date.now()}` })).body.projectId as string;
    expect((await t.call('user.assignPermissions', { id: userId, accessedProjects: [projectId] })).status).toBe(200);
    await cachedOnB(key);
    expect((await onB(key)('project.one', { projectId })).status).toBe(200);
    expect((await t.call('user.assignPermissions', { id: userId, accessedProjects: [] })).status).toBe(200);
    expect((await onB(key)('project.one', { projectId })).status).toBe(403);
  });

  it('a role lowered in the database (no operation changes one) is refused by both well within the cache lifetime', async () => {
    const { userId, key } = await addMember(t, `lowered-${Date.now()}@example.com`, 'admin');
    await cachedOnB(key);
    expect((await t.as(key)('audit.list', {})).status).toBe(200);
    expect((await onB(key)('audit.list', {})).status).toBe(200);
    const at = Date.now();
    await t.db.updateTable('members').set({ role: 'member' }).where('userId', '=', userId).execute();
    await waitFor(async () => (await onB(key)('audit.list', {})).status === 403 && (await t.as(key)('audit.list', {})).status === 403, {
      timeoutMs: 2_000,
      intervalMs: 20,
      what: 'the lowered role refused on both control planes',
    });
    expect(Date.now() - at).toBeLessThan(2_000);
  });

  it('after the listening connections are killed, the next change still reaches B', async () => {
    const { userId, key } = await addMember(t, `after-kill-${Date.now()}@example.com`);
    const sessions = [t.platform.accessChanges.sessions, b.accessChanges.sessions];
    const listeners = await sql<{ pid: number }>`
      select pid from pg_stat_activity where datname = current_database() and application_name = ${listenerName(ACCESS_CHANNEL)}`.execute(t.db);
    expect(listeners.rows).toHaveLength(2);
    for (const { pid } of listeners.rows) await sql`select pg_terminate_backend(${pid})`.execute(t.db);
    // Whatever B cached before the listener came back is gone: it listens again (or reads every key meanwhile).
    await waitFor(() => t.platform.accessChanges.sessions > sessions[0]! && b.accessChanges.sessions > sessions[1]!, { what: 'both listeners back' });
    await cachedOnB(key);
    expect((await t.call('user.deleteApiKey', { apiKeyId: await keyIdOf(userId) })).status).toBe(200);
    expect((await onB(key)('project.all')).status).toBe(401);
  });
});

describe('one control plane on PGlite', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ database: 'pglite' });
  });
  afterAll(() => p?.close());

  it('clears its own cache at each change: a removed key, a removed member, a permission taken back', async () => {
    const gone = await addMember(p, 'pglite-key@example.com');
    expect((await p.as(gone.key)('project.all')).status).toBe(200);
    const apiKeyId = (await p.db.selectFrom('apiKeys').select('id').where('userId', '=', gone.userId).executeTakeFirstOrThrow()).id;
    expect((await p.call('user.deleteApiKey', { apiKeyId })).status).toBe(200);
    expect((await p.as(gone.key)('project.all')).status).toBe(401);

    const removed = await addMember(p, 'pglite-member@example.com');
    expect((await p.as(removed.key)('project.all')).status).toBe(200);
    expect((await p.call('user.remove', { userId: removed.userId })).status).toBe(200);
    expect((await p.as(removed.key)('project.all')).status).toBe(401);

    const narrowed = await addMember(p, 'pglite-narrowed@example.com');
    const projectId = (await p.call('project.create', { name: 'granted' })).body.projectId as string;
    expect((await p.call('user.assignPermissions', { id: narrowed.userId, accessedProjects: [projectId] })).status).toBe(200);
    expect((await p.as(narrowed.key)('project.one', { projectId })).status).toBe(200);
    expect((await p.call('user.assignPermissions', { id: narrowed.userId, accessedProjects: [] })).status).toBe(200);
    expect((await p.as(narrowed.key)('project.one', { projectId })).status).toBe(403);
  });
});
