import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

/**
 * Invitations and the platform administrator: an organization admin (anyone may create an
 * organization) must never reach another account, nor the platform's administration, through
 * an invitation token.
 */
let t: TestPlatform;
let ownerId: string;
/** An admin of the default organization with an organization of their own ("Evil"), where they are the owner. */
let attacker: { userId: string; key: string; organizationId: string };

beforeAll(async () => {
  t = await startTestPlatform();
  ownerId = (await t.call('user.get')).body.userId;
  const joined = await addMember(t, 'attacker@example.com', 'admin');
  const org = await t.as(joined.key)('organization.create', { name: 'Evil' });
  const key = await t.as(joined.key)('user.createApiKey', { name: 'evil', metadata: { organizationId: org.body.organizationId } });
  attacker = { userId: joined.userId, key: key.body.key, organizationId: org.body.organizationId };
});
afterAll(() => t?.close());

const keysOf = async (userId: string) =>
  (await t.db.selectFrom('apiKeys').select(['id', 'organizationId']).where('userId', '=', userId).execute()).length;
const isMember = async (userId: string, organizationId: string) =>
  Boolean(
    await t.db.selectFrom('members').select('id').where('userId', '=', userId).where('organizationId', '=', organizationId).executeTakeFirst(),
  );

describe('an invitation for an existing account', () => {
  it('never yields a key without that account: the token alone is refused (the takeover)', async () => {
    const keysBefore = await keysOf(ownerId);
    const inv = await t.as(attacker.key)('organization.inviteMember', { email: 'owner@test.local' });
    expect(inv.status).toBe(200);
    const res = await t.as(null)('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status, JSON.stringify(res.body)).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    expect(res.body.apiKey).toBeUndefined();
    expect(await isMember(ownerId, attacker.organizationId)).toBe(false);
    expect(await keysOf(ownerId)).toBe(keysBefore);
    // The refusal says what to do, not who has an account.
    expect(res.body.message).not.toMatch(/owner@test\.local/);
  });

  it("refuses another account's key", async () => {
    const inv = await t.as(attacker.key)('organization.inviteMember', { email: 'owner@test.local' });
    const res = await t.as(attacker.key)('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(await isMember(ownerId, attacker.organizationId)).toBe(false);
    expect(await isMember(attacker.userId, attacker.organizationId)).toBe(true);
  });

  it('refuses an invalid key rather than ignoring it', async () => {
    const inv = await t.as(attacker.key)('organization.inviteMember', { email: 'owner@test.local' });
    const res = await t.as('skf_not-a-key')('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/API key/);
    expect(await isMember(ownerId, attacker.organizationId)).toBe(false);
  });

  it("is accepted with the invitee's own key: the membership only, no key minted", async () => {
    const keysBefore = await keysOf(ownerId);
    const inv = await t.as(attacker.key)('organization.inviteMember', { email: 'owner@test.local' });
    const info = await t.call('user.getUserByToken', { token: inv.body.token });
    expect(info.body).toMatchObject({ userExists: true });
    const res = await t.call('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ userId: ownerId, organizationId: attacker.organizationId, apiKey: null });
    expect(await isMember(ownerId, attacker.organizationId)).toBe(true);
    expect(await keysOf(ownerId)).toBe(keysBefore);
    // Once used, the token is spent.
    expect((await t.call('organization.acceptInvitation', { token: inv.body.token })).status).toBe(401);
  });

  it('never carries platform administration into an organization it was not granted in', async () => {
    // The owner (platform admin) is now a member of Evil and asks for a key there themself.
    const key = await t.call('user.createApiKey', { name: 'in-evil', metadata: { organizationId: attacker.organizationId } });
    expect(key.status).toBe(200);
    const inEvil = t.as(key.body.key);
    expect((await inEvil('user.haveRootAccess')).body).toEqual({ haveRootAccess: false });
    const write = await inEvil('settings.updateContainerCleanup', { enableContainerCleanup: true });
    expect(write.status).toBe(403);
    // Still the platform administrator where the platform made them one.
    expect((await t.call('user.haveRootAccess')).body).toEqual({ haveRootAccess: true });
  });
});

describe('an email change', () => {
  it('cannot capture a pending invitation made for a new account', async () => {
    const inv = await t.call('organization.inviteMember', { email: 'newcomer@example.com', role: 'admin' });
    expect(inv.status).toBe(200);
    const thief = await addMember(t, 'thief@example.com');
    const changed = await t.as(thief.key)('user.update', { email: 'newcomer@example.com' });
    expect(changed.status).toBe(200);
    expect((await t.as(thief.key)('user.getInvitations')).body).toEqual([]);
    const withKey = await t.as(thief.key)('organization.acceptInvitation', { token: inv.body.token });
    expect(withKey.status, JSON.stringify(withKey.body)).toBe(403);
    const anonymous = await t.as(null)('organization.acceptInvitation', { token: inv.body.token });
    expect(anonymous.status, JSON.stringify(anonymous.body)).toBe(401);
    const member = await t.db.selectFrom('members').select('role').where('userId', '=', thief.userId).where('organizationId', '=', t.organizationId).executeTakeFirstOrThrow();
    expect(member.role).toBe('member');
  });

  it('cannot capture an invitation made for another existing account', async () => {
    const victim = await addMember(t, 'victim@example.com');
    const inv = await t.as(attacker.key)('organization.inviteMember', { email: 'victim@example.com' });
    // The victim moves to another address; someone takes the old one.
    expect((await t.as(victim.key)('user.update', { email: 'victim2@example.com' })).status).toBe(200);
    const thief = await addMember(t, 'thief2@example.com');
    expect((await t.as(thief.key)('user.update', { email: 'victim@example.com' })).status).toBe(200);
    const res = await t.as(thief.key)('organization.acceptInvitation', { token: inv.body.token });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(await isMember(thief.userId, attacker.organizationId)).toBe(false);
    // The account it was made for still can.
    expect((await t.as(victim.key)('organization.acceptInvitation', { token: inv.body.token })).status).toBe(200);
    expect(await isMember(victim.userId, attacker.organizationId)).toBe(true);
  });
});

describe('an organization admin', () => {
  it("cannot change another user's email or platform flag through user.update", async () => {
    const admin = await addMember(t, 'org-admin@example.com', 'admin');
    await t.as(admin.key)('user.update', { userId: ownerId, id: ownerId, email: 'taken@example.com', isPlatformAdmin: true });
    const owner = await t.db.selectFrom('users').select(['email', 'isPlatformAdmin']).where('id', '=', ownerId).executeTakeFirstOrThrow();
    expect(owner).toEqual({ email: 'owner@test.local', isPlatformAdmin: true });
    const self = await t.db.selectFrom('users').select('isPlatformAdmin').where('id', '=', admin.userId).executeTakeFirstOrThrow();
    expect(self.isPlatformAdmin).toBe(false);
    expect((await t.as(admin.key)('user.haveRootAccess')).body).toEqual({ haveRootAccess: false });
  });
});
