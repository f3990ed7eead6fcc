import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
let projectId: string;
let n = 0;

beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'secured' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const createApp = async () => {
  const res = await t.call('application.create', { name: `web ${++n}`, environmentId: env });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.applicationId as string;
};

const storedRow = (securityId: string) => t.db.selectFrom('securityEntries').selectAll().where('id', '=', securityId).executeTakeFirstOrThrow();

const refuses = async (operation: string, input: Record<string, unknown>, field: string) => {
  const res = await t.call(operation, input);
  expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
};

describe('security entries', () => {
  it('stores the password as a bcrypt hash and never returns it', async () => {
    const applicationId = await createApp();
    const created = await t.call('security.create', { applicationId, username: 'admin', password: 'correct-horse-battery' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(Object.keys(created.body).sort()).toEqual(['applicationId', 'createdAt', 'securityId', 'username']);
    expect(created.body).toMatchObject({ applicationId, username: 'admin' });
    expect(JSON.stringify(created.body)).not.toContain('correct-horse');
    const one = await t.call('security.one', { securityId: created.body.securityId });
    expect(one.body).toEqual(created.body);

    const row = await storedRow(created.body.securityId);
    expect(JSON.stringify(row)).not.toContain('correct-horse-battery');
    expect(row.passwordHash).toMatch(/^\$2[aby]\$10\$/);
    expect(await bcrypt.compare('correct-horse-battery', row.passwordHash)).toBe(true);
    expect(await bcrypt.compare('wrong', row.passwordHash)).toBe(false);
  });

  it('updates the username and password', async () => {
    const applicationId = await createApp();
    const created = (await t.call('security.create', { applicationId, username: 'ops', password: 'first-pass' })).body;
    const before = await storedRow(created.securityId);
    const updated = await t.call('security.update', { securityId: created.securityId, username: 'ops2', password: 'second-pass' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ ...created, username: 'ops2' });
    const after = await storedRow(created.securityId);
    expect(after.passwordHash).not.toBe(before.passwordHash);
    expect(await bcrypt.compare('second-pass', after.passwordHash)).toBe(true);
    expect(JSON.stringify(updated.body)).not.toContain('second-pass');
    expect((await t.call('security.update', { securityId: 'sec_missing', username: 'a', password: 'b' })).status).toBe(404);
  });

  it('keeps usernames unique per application, naming the field', async () => {
    const first = await createApp();
    const second = await createApp();
    await t.call('security.create', { applicationId: first, username: 'shared', password: 'p1' });
    await refuses('security.create', { applicationId: first, username: 'shared', password: 'p2' }, 'username');
    const elsewhere = await t.call('security.create', { applicationId: second, username: 'shared', password: 'p3' });
    expect(elsewhere.status).toBe(200);
    const other = (await t.call('security.create', { applicationId: first, username: 'other', password: 'p4' })).body;
    await refuses('security.update', { securityId: other.securityId, username: 'shared', password: 'p5' }, 'username');
    expect((await t.call('security.one', { securityId: other.securityId })).body.username).toBe('other');
    expect((await t.call('security.update', { securityId: other.securityId, username: 'other', password: 'p6' })).status).toBe(200);
  });

  it('refuses credentials basic auth cannot carry', async () => {
    const applicationId = await createApp();
    await refuses('security.create', { applicationId, username: 'a:b', password: 'x' }, 'username');
    await refuses('security.create', { applicationId, username: 'a\nb', password: 'x' }, 'username');
    await refuses('security.create', { applicationId, username: 'u'.repeat(256), password: 'x' }, 'username');
    await refuses('security.create', { applicationId, username: 'long', password: 'p'.repeat(73) }, 'password');
    await refuses('security.create', { applicationId, username: 'long', password: 'é'.repeat(37) }, 'password');
    expect((await t.call('security.create', { applicationId, username: 'long', password: 'p'.repeat(72) })).status).toBe(200);
    expect(await t.db.selectFrom('securityEntries').select('username').where('applicationId', '=', applicationId).execute()).toEqual([{ username: 'long' }]);
    expect((await t.call('security.create', { applicationId: 'app_missing', username: 'a', password: 'b' })).status).toBe(404);
  });

  it('lists an application\'s entries, oldest first, without passwords', async () => {
    const applicationId = await createApp();
    const other = await createApp();
    const a = (await t.call('security.create', { applicationId, username: 'first', password: 'pass-one' })).body;
    const b = (await t.call('security.create', { applicationId, username: 'second', password: 'pass-two' })).body;
    await t.call('security.create', { applicationId: other, username: 'elsewhere', password: 'pass-three' });
    const listed = await t.call('security.all', { applicationId });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body).toEqual([a, b]);
    expect(JSON.stringify(listed.body)).not.toContain('pass-');
    expect((await t.call('security.all', { applicationId: 'app_missing' })).status).toBe(404);
    await refuses('security.all', { applicationId: '' }, 'applicationId');
  });

  it('deletes entries, and an application takes its entries with it', async () => {
    const applicationId = await createApp();
    const one = (await t.call('security.create', { applicationId, username: 'a', password: 'x' })).body;
    await t.call('security.create', { applicationId, username: 'b', password: 'y' });
    const deleted = await t.call('security.delete', { securityId: one.securityId });
    expect(deleted.body).toEqual(one);
    expect((await t.call('security.one', { securityId: one.securityId })).status).toBe(404);
    expect((await t.call('application.delete', { applicationId })).status).toBe(200);
    expect(await t.db.selectFrom('securityEntries').select('id').where('applicationId', '=', applicationId).execute()).toEqual([]);
  });
});

describe('security permissions', () => {
  it('follows access to the application for members; admins reach everything', async () => {
    const applicationId = await createApp();
    const entry = (await t.call('security.create', { applicationId, username: 'perm', password: 'x' })).body;
    const member = await addMember(t, 'dev@example.com');
    const admin = await addMember(t, 'admin@example.com', 'admin');
    const m = t.as(member.key);
    expect((await m('security.one', { securityId: entry.securityId })).status).toBe(403);
    expect((await m('security.all', { applicationId })).status).toBe(403);
    expect((await m('security.create', { applicationId, username: 'm', password: 'x' })).status).toBe(403);
    expect((await m('security.update', { securityId: entry.securityId, username: 'perm', password: 'y' })).status).toBe(403);
    expect((await m('security.delete', { securityId: entry.securityId })).status).toBe(403);
    expect((await t.as(admin.key)('security.one', { securityId: entry.securityId })).status).toBe(200);

    await t.call('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [applicationId] });
    expect((await m('security.one', { securityId: entry.securityId })).status).toBe(200);
    expect((await m('security.create', { applicationId, username: 'm', password: 'x' })).status).toBe(200);
    expect((await m('security.update', { securityId: entry.securityId, username: 'perm', password: 'y' })).status).toBe(200);
    expect((await m('security.delete', { securityId: entry.securityId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization', async () => {
    const applicationId = await createApp();
    const entry = (await t.call('security.create', { applicationId, username: 'mine', password: 'x' })).body;
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('security.one', { securityId: entry.securityId })).status).toBe(404);
    expect((await outsider('security.all', { applicationId })).status).toBe(404);
    expect((await outsider('security.update', { securityId: entry.securityId, username: 'stolen', password: 'y' })).status).toBe(404);
    expect((await outsider('security.delete', { securityId: entry.securityId })).status).toBe(404);
    expect((await outsider('security.create', { applicationId, username: 'in', password: 'x' })).status).toBe(404);
    expect((await t.call('security.one', { securityId: entry.securityId })).body.username).toBe('mine');
  });
});
