import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

describe('first boot', () => {
  it('runs once: a second bootstrap does nothing', async () => {
    expect(await t.platform.identity.bootstrap({ email: 'x@y.z', name: 'X' })).toBeNull();
    const users = await t.db.selectFrom('users').select('email').execute();
    expect(users.map((u) => u.email)).toEqual(['owner@test.local']);
  });

  it('made the owner the platform admin of a default organization', async () => {
    const me = await t.call('user.get');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ email: 'owner@test.local', role: 'owner', organizationId: t.organizationId });
    expect((await t.call('user.haveRootAccess')).body).toEqual({ haveRootAccess: true });
    const orgs = await t.call('organization.all');
    expect(orgs.body).toMatchObject([{ name: 'Default', role: 'owner', isDefault: true }]);
  });
});

describe('API keys', () => {
  it('creates a key shown once, stored only as a hash, usable at once, and deletes it', async () => {
    const created = await t.call('user.createApiKey', { name: 'ci' });
    expect(created.status).toBe(200);
    const { key, apiKeyId, start } = created.body;
    expect(key).toMatch(/^skf_[A-Za-z0-9_-]{43}$/);
    expect(key.startsWith(start)).toBe(true);

    const rows = await t.db.selectFrom('apiKeys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(key);

    expect((await t.as(key)('project.all')).status).toBe(200);
    expect((await t.call('user.deleteApiKey', { apiKeyId })).status).toBe(200);
    expect((await t.as(key)('project.all')).status).toBe(401);
  });

  it('generates a token bound to the current organization', async () => {
    const res = await t.call('user.generateToken');
    expect(res.body.organizationId).toBe(t.organizationId);
    expect((await t.as(res.body.key)('user.get')).body.userId).toBeDefined();
  });

  it('binds a key to another organization through metadata, and acts there', async () => {
    const org = await t.call('organization.create', { name: 'Second' });
    const key = await t.call('user.createApiKey', { name: 'second', metadata: { organizationId: org.body.organizationId } });
    expect(key.status).toBe(200);
    const created = await t.as(key.body.key)('project.create', { name: 'in-second' });
    expect(created.body.organizationId).toBe(org.body.organizationId);
    const mine = await t.call('project.all');
    expect(mine.body.map((p: { name: string }) => p.name)).not.toContain('in-second');
  });

  it('refuses binding a key to an organization the caller is not in', async () => {
    const res = await t.call('user.createApiKey', { name: 'nope', metadata: { organizationId: 'org_elsewhere' } });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['metadata.organizationId']);
  });
});

describe('invitations', () => {
  it('invites, shows, accepts once, and the new member can call the API', async () => {
    const inv = await t.call('organization.inviteMember', { email: 'Dev@Example.com' });
    expect(inv.status).toBe(200);
    expect(inv.body).toMatchObject({ email: 'dev@example.com', role: 'member', status: 'pending' });
    // A token never looks like an id: different prefixes.
    expect(inv.body.invitationId).toMatch(/^inv_/);
    expect(inv.body.token).toMatch(/^sit_/);

    const listed = await t.call('organization.allInvitations');
    expect(listed.body.map((i: { invitationId: string }) => i.invitationId)).toContain(inv.body.invitationId);
    expect(JSON.stringify(listed.body)).not.toContain(inv.body.token);

    const info = await t.call('user.getUserByToken', { token: inv.body.token });
    expect(info.body).toMatchObject({ email: 'dev@example.com', expired: false, userExists: false, organizationName: 'Default' });

    const accepted = await t.as(null)('organization.acceptInvitation', { token: inv.body.token, name: 'Dev' });
    expect(accepted.status).toBe(200);
    const member = t.as(accepted.body.apiKey.key);
    expect((await member('user.get')).body).toMatchObject({ name: 'Dev', role: 'member' });

    const again = await t.as(null)('organization.acceptInvitation', { token: inv.body.token });
    expect(again.status).toBe(401);
  });

  it('cancels an invitation so its token no longer works', async () => {
    const inv = await t.call('organization.inviteMember', { email: 'late@example.com' });
    expect((await t.call('organization.removeInvitation', { invitationId: inv.body.invitationId })).status).toBe(200);
    const res = await t.as(null)('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status).toBe(401);
  });

  it('refuses inviting a current member', async () => {
    const res = await t.call('organization.inviteMember', { email: 'owner@test.local' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['email']);
  });

  it('lists pending invitations addressed to the caller', async () => {
    const other = await t.call('organization.create', { name: 'Inviting' });
    const key = await t.call('user.createApiKey', { name: 'inviting', metadata: { organizationId: other.body.organizationId } });
    const { key: memberKey } = await addMember(t, 'multi@example.com');
    await t.as(key.body.key)('organization.inviteMember', { email: 'multi@example.com' });
    const mine = await t.as(memberKey)('user.getInvitations');
    expect(mine.body).toMatchObject([{ organizationName: 'Inviting', email: 'multi@example.com' }]);
  });
});

describe('users and organizations', () => {
  it('updates the own profile and refuses a taken email', async () => {
    const { key } = await addMember(t, 'profile@example.com');
    const res = await t.as(key)('user.update', { name: 'Pro', lastName: 'File' });
    expect(res.body).toMatchObject({ name: 'Pro', lastName: 'File', email: 'profile@example.com' });
    const taken = await t.as(key)('user.update', { email: 'owner@test.local' });
    expect(taken.status).toBe(400);
    expect(taken.body.issues[0].path).toEqual(['email']);
  });

  it('removes a member; a user in no organization leaves the platform, and their keys stop', async () => {
    const { userId, key } = await addMember(t, 'leaving@example.com');
    const res = await t.call('user.remove', { userId });
    expect(res.body).toEqual({ userId, removedFromPlatform: true });
    expect((await t.as(key)('user.get')).status).toBe(401);
    expect((await t.call('user.one', { userId })).status).toBe(404);
  });

  it('never removes the owner', async () => {
    const me = await t.call('user.get');
    const { key } = await addMember(t, 'admin2@example.com', 'admin');
    const res = await t.as(key)('user.remove', { userId: me.body.userId });
    expect(res.status).toBe(403);
  });

  it('updates, defaults and deletes organizations with the right roles', async () => {
    const org = await t.call('organization.create', { name: 'Temp' });
    const id = org.body.organizationId;
    expect((await t.call('organization.update', { organizationId: id, name: 'Temp 2', defaultRole: 'admin' })).body).toMatchObject({
      name: 'Temp 2',
      defaultRole: 'admin',
    });
    const bad = await t.call('organization.update', { organizationId: id, name: 'x', defaultRole: 'owner' });
    expect(bad.status).toBe(400);
    expect((await t.call('organization.setDefault', { organizationId: id })).body.isDefault).toBe(true);
    const checked = await t.call('user.checkUserOrganizations', { userId: (await t.call('user.get')).body.userId });
    expect(checked.body.organizationIds).toContain(id);
    expect((await t.call('organization.delete', { organizationId: id })).status).toBe(200);
    expect((await t.call('organization.one', { organizationId: id })).status).toBe(404);
    const orgs = await t.call('organization.all');
    expect(orgs.body.filter((o: { isDefault: boolean }) => o.isDefault)).toHaveLength(1);
  });

  it("answers another member's organizations only as far as the caller shares them", async () => {
    const shared = await addMember(t, 'shared@example.com', 'admin');
    const own = await t.as(shared.key)('organization.create', { name: 'Shared private' });
    expect(own.status).toBe(200);
    const admin = await addMember(t, 'looker@example.com', 'admin');
    const seen = await t.as(admin.key)('user.checkUserOrganizations', { userId: shared.userId });
    expect(seen.status, JSON.stringify(seen.body)).toBe(200);
    // The other organization is never named; the count still says the account lives on elsewhere.
    expect(seen.body).toEqual({ count: 2, organizationIds: [t.organizationId] });
    expect(JSON.stringify(seen.body)).not.toContain(own.body.organizationId);
    // The user themself sees all of theirs.
    const self = await t.as(shared.key)('user.checkUserOrganizations', { userId: shared.userId });
    expect(self.body.count).toBe(2);
    expect([...self.body.organizationIds].sort()).toEqual([t.organizationId, own.body.organizationId].sort());
  });

  it('refuses deleting an organization the caller only belongs to, or does not own', async () => {
    const { key } = await addMember(t, 'solo@example.com', 'admin');
    const mine = await t.as(key)('organization.all');
    const res = await t.as(key)('organization.delete', { organizationId: mine.body[0].organizationId });
    expect(res.status).toBe(403);
  });
});
