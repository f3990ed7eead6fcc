import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../authz/principal.js';
import { addMember, startTestPlatform, type Answer, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let now = Date.now();
const DAY = 86_400_000;
let projectId: string;
let appId: string;
let ownerKeyId: string;
let ownerId: string;
const statements: string[] = [];

const ok = (res: Answer) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const audit = async (filters: Record<string, unknown> = {}, as = t.call) => ok(await as('audit.list', filters));

beforeAll(async () => {
  t = await startTestPlatform({ clock: () => new Date(now), onQuery: (sql) => statements.push(sql) });
  ownerId = ok(await t.call('user.get')).userId;
  ownerKeyId = ok(await t.call('user.apiKeys')).find((k: { name: string }) => k.name === 'initial').apiKeyId;
  const project = ok(await t.call('project.create', { name: 'audited' }));
  projectId = project.projectId;
  appId = ok(await t.call('application.create', { name: 'web', environmentId: project.environments[0].environmentId })).applicationId;
});
afterAll(() => t?.close());

describe('the audit log', () => {
  it('records a mutation: who, which key, operation, target, when, from where; never a value sent', async () => {
    const secret = t.watch.secret('S3CRET-env-value-4711');
    const password = t.watch.secret('pw-audit-0815');
    now += 1000;
    ok(await t.call('application.saveEnvironment', { applicationId: appId, env: `TOKEN=${secret}`, buildArgs: null, buildSecrets: null, createEnvFile: false }, { address: '203.0.113.7' }));
    const env = (await t.call('project.one', { projectId })).body.environments[0].environmentId;
    now += 1000;
    ok(await t.call('cache.create', { name: 'kv', environmentId: env, databasePassword: password }));
    const [latest, saved] = (await audit()).items;
    expect(latest).toMatchObject({ operation: 'cache.create', outcome: 'ok', targets: { environmentId: env } });
    expect(saved).toMatchObject({
      operation: 'application.saveEnvironment',
      userId: ownerId,
      apiKeyId: ownerKeyId,
      targets: { applicationId: appId },
      address: '203.0.113.7',
      outcome: 'ok',
      at: new Date(now - 1000).toISOString(),
    });
    const rows = JSON.stringify(await t.db.selectFrom('auditEvents').selectAll().execute());
    expect(rows).not.toContain(secret);
    expect(rows).not.toContain(password);
  });

  it('records no reads, and records refusals for permission', async () => {
    ok(await t.call('project.all'));
    expect((await audit({ operation: 'project.all' })).items).toEqual([]);
    const member = await addMember(t, 'audited-member@example.com');
    expect((await t.as(member.key)('project.update', { projectId, name: 'mine' })).status).toBe(403);
    const [refused] = (await audit({ userId: member.userId, operation: 'project.update' })).items;
    expect(refused).toMatchObject({ outcome: 'forbidden', targets: { projectId } });
  });

  it('filters by user, key, operation, target and time, and pages newest first', async () => {
    const start = now;
    for (let i = 0; i < 5; i++) {
      now += 1000;
      ok(await t.call('project.update', { projectId, description: `step ${i}` }));
    }
    const all = (await audit({ operation: 'project.update', userId: ownerId, apiKeyId: ownerKeyId, from: new Date(start + 1).toISOString() })).items;
    expect(all).toHaveLength(5);
    expect(all.map((e: { at: string }) => e.at)).toEqual([...all.map((e: { at: string }) => e.at)].sort().reverse());
    expect((await audit({ targetId: projectId, from: new Date(start + 1).toISOString(), to: new Date(start + 3001).toISOString() })).items).toHaveLength(3);
    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await audit({ operation: 'project.update', userId: ownerId, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((e: { auditEventId: string }) => e.auditEventId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.map((e: { auditEventId: string }) => e.auditEventId));
    const bad = await t.call('audit.list', { cursor: 'not-a-cursor' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['cursor']);
  });

  it('is not visible to another organization, nor to a plain member', async () => {
    const other = ok(await t.call('organization.create', { name: 'Other audit' }));
    const key = t.watch.secret(ok(await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key);
    const theirs = (await audit({}, t.as(key))).items;
    expect(theirs.every((e: { organizationId: string }) => e.organizationId === other.organizationId)).toBe(true);
    expect(theirs.some((e: { targets: Record<string, string> }) => e.targets.projectId === projectId)).toBe(false);
    const member = await addMember(t, 'plain-member@example.com');
    expect((await t.as(member.key)('audit.list')).status).toBe(403);
  });

  it('writes the events recorded while a write is under way together, each stored before its record() resolves', async () => {
    // The recorder reads only who and which key.
    const principal = { userId: ownerId, organizationId: t.organizationId, apiKeyId: ownerKeyId } as Principal;
    statements.length = 0;
    const entry = (i: number) => ({ principal, operation: 'project.update', input: { projectId: `prj_batch${i}` }, outcome: 'ok' as const, address: null, requestId: `req_batch${i}` });
    await Promise.all(Array.from({ length: 20 }, (_, i) => t.platform.audit.record(entry(i))));
    expect(statements.filter((s) => /^insert into "audit_events"/.test(s))).toHaveLength(1);
    const stored = await t.db.selectFrom('auditEvents').select('requestId').where('requestId', 'like', 'req_batch%').execute();
    expect(stored).toHaveLength(20);
    // One more while nothing is under way: written at once, alone.
    await t.platform.audit.record(entry(20));
    expect(statements.filter((s) => /^insert into "audit_events"/.test(s))).toHaveLength(2);
  });

  it('prunes events past the retention period (90 days by default)', async () => {
    const before = (await audit({ targetId: projectId })).items.length;
    expect(before).toBeGreaterThan(0);
    now += 91 * DAY;
    ok(await t.call('project.update', { projectId, description: 'much later' }));
    await t.platform.audit.settled();
    const left = (await audit({ targetId: projectId })).items;
    expect(left.map((e: { at: string }) => e.at)).toEqual([new Date(now).toISOString()]);
  });
});
