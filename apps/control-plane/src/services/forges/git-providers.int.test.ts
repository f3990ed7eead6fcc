import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let ownerId: string;
let env: string;
const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;

beforeAll(async () => {
  t = await startTestPlatform();
  ownerId = (await t.call('user.get')).body.userId;
  env = (await t.call('project.create', { name: 'sources' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

type Kind = 'forgeA' | 'forgeB' | 'forgeC' | 'forgeD';

/** A valid create input of each kind, with one secret value to look for. */
const inputs = (): Record<Kind, { input: Record<string, unknown>; secrets: string[] }> => ({
  forgeA: {
    input: {
      name: 'GitHub acme', authId: ownerId, appName: 'skiff-acme', appId: 123456, clientId: 'Iv1.abc',
      clientSecret: 'gh-client-secret-1', installationId: '7654321', privateKey: rsaKey, webhookSecret: 'gh-webhook-secret-1',
      accessToken: 'gh-access-token-1',
    },
    secrets: ['gh-client-secret-1', 'gh-webhook-secret-1', 'gh-access-token-1', rsaKey.split('\n')[1]!],
  },
  forgeB: {
    input: {
      name: 'GitLab', authId: ownerId, forgeBUrl: 'https://gitlab.example.com/', applicationId: 'oauth-app',
      secret: 'gl-oauth-secret-1', redirectUri: 'https://skiff.example.com/callback', groupName: 'acme',
      accessToken: 'gl-access-token-1', refreshToken: 'gl-refresh-token-1',
    },
    secrets: ['gl-oauth-secret-1', 'gl-access-token-1', 'gl-refresh-token-1'],
  },
  forgeC: {
    input: {
      name: 'Bitbucket', authId: ownerId, forgeCUsername: 'jdoe', forgeCEmail: 'jdoe@example.com',
      appPassword: 'bb-app-password-1', apiToken: 'bb-api-token-1', forgeCWorkspaceName: 'acme',
    },
    secrets: ['bb-app-password-1', 'bb-api-token-1'],
  },
  forgeD: {
    input: {
      name: 'Forgejo', authId: ownerId, forgeDUrl: 'https://git.example.com', clientId: 'oauth-client',
      clientSecret: 'gt-client-secret-1', accessToken: 'gt-access-token-1', organizationName: 'acme',
    },
    secrets: ['gt-client-secret-1', 'gt-access-token-1'],
  },
});

const create = async (kind: Kind, overrides: Record<string, unknown> = {}, call = t.call) => {
  const res = await call(`${kind}.create`, { ...inputs()[kind].input, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const KINDS: Kind[] = ['forgeA', 'forgeB', 'forgeC', 'forgeD'];

describe('forge connections of every kind', () => {
  it.each(KINDS)('%s: creates, reads and lists a connection, secrets write-only and sealed', async (kind) => {
    const { secrets } = inputs()[kind];
    const created = await create(kind);
    expect(created[`${kind}Id`]).toMatch(/^fg[abcd]_/);
    expect(created.gitProviderId).toMatch(/^gp_/);
    expect(created).toMatchObject({ name: expect.any(String), authId: ownerId, userId: ownerId, organizationId: t.organizationId });
    expect((await t.call(`${kind}.one`, { [`${kind}Id`]: created[`${kind}Id`] })).body).toEqual(created);
    const listed = (await t.call(`${kind}.${kind}Providers`)).body;
    expect(listed).toContainEqual(created);
    for (const other of KINDS.filter((k) => k !== kind)) {
      expect(listed.every((r: Record<string, unknown>) => `${other}Id` in r === false)).toBe(true);
    }
    const summary = (await t.call('gitProvider.getAll')).body.find((g: { gitProviderId: string }) => g.gitProviderId === created.gitProviderId);
    expect(summary).toEqual({
      gitProviderId: created.gitProviderId, kind, forgeId: created[`${kind}Id`], name: created.name,
      authId: ownerId, userId: ownerId, organizationId: t.organizationId, createdAt: created.createdAt,
    });

    const flags = Object.keys(created).filter((k) => /^has[A-Z]/.test(k));
    expect(flags.length).toBeGreaterThan(0);
    for (const flag of flags) expect(created[flag], flag).toBe(true);
    const row = await t.db.selectFrom('gitProviders').selectAll().where('id', '=', created[`${kind}Id`]).executeTakeFirstOrThrow();
    for (const secret of secrets) {
      expect(JSON.stringify(created)).not.toContain(secret);
      expect(JSON.stringify(listed)).not.toContain(secret);
      expect(JSON.stringify(row)).not.toContain(secret);
    }
  });

  it('fills API base URLs by default, takes self-hosted ones, and trims trailing slashes', async () => {
    expect((await create('forgeA')).apiUrl).toBe('https://api.github.com');
    expect((await create('forgeA', { apiUrl: 'https://ghe.example.com/api/v3/' })).apiUrl).toBe('https://ghe.example.com/api/v3');
    expect((await create('forgeC')).apiUrl).toBe('https://api.bitbucket.org/2.0');
    const b = await create('forgeB', { forgeBInternalUrl: 'http://gitlab.internal:8080' });
    expect(b).toMatchObject({ forgeBUrl: 'https://gitlab.example.com', forgeBInternalUrl: 'http://gitlab.internal:8080', groupName: 'acme' });
  });

  it('refuses link-local and metadata URLs, bad keys and unknown users, naming the field and storing nothing', async () => {
    const before = (await t.call('gitProvider.getAll')).body.length;
    for (const [kind, field, value] of [
      ['forgeA', 'apiUrl', 'http://169.254.169.254/'],
      ['forgeB', 'forgeBUrl', 'http://metadata.google.internal'],
      ['forgeB', 'forgeBInternalUrl', 'http://[fe80::1]/'],
      ['forgeB', 'forgeBUrl', 'gitlab.example.com'],
      ['forgeB', 'redirectUri', 'javascript:alert(1)'],
      ['forgeC', 'apiUrl', 'http://169.254.1.1/2.0'],
      ['forgeD', 'forgeDUrl', 'file:///etc/passwd'],
      ['forgeA', 'privateKey', 'not a key'],
      ['forgeA', 'privateKey', generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' })],
      ['forgeA', 'installationId', 'abc'],
      ['forgeC', 'forgeCEmail', 'not-an-email'],
      ['forgeD', 'authId', 'usr_nobody'],
      ['forgeB', 'name', ''],
    ] as const) {
      const res = await t.call(`${kind}.create`, { ...inputs()[kind].input, [field]: value });
      expect(res.status, `${kind} ${field}`).toBe(400);
      expect(res.body.issues[0].path[0], `${kind} ${field}`).toBe(field);
    }
    expect((await t.call('gitProvider.getAll')).body.length).toBe(before);
  });

  it('answers NOT_FOUND for an id of another kind', async () => {
    const b = await create('forgeB');
    expect((await t.call('forgeC.one', { forgeCId: b.forgeBId })).status).toBe(404);
    expect((await t.call('forgeC.update', { forgeCId: b.forgeBId, gitProviderId: b.gitProviderId, name: 'x' })).status).toBe(404);
    expect((await t.call('forgeB.one', { forgeBId: 'fgb_missing' })).status).toBe(404);
  });
});

describe('forge connection updates', () => {
  it('changes the fields given, keeps secrets left out, clears secrets set empty', async () => {
    const c = await create('forgeC');
    const res = await t.call('forgeC.update', {
      forgeCId: c.forgeCId, gitProviderId: c.gitProviderId, name: 'Bitbucket EU', forgeCWorkspaceName: 'acme-eu', apiToken: '',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ ...c, name: 'Bitbucket EU', forgeCWorkspaceName: 'acme-eu', hasApiToken: false });
    const row = await t.db.selectFrom('gitProviders').select('secrets').where('id', '=', c.forgeCId).executeTakeFirstOrThrow();
    expect(JSON.parse(t.platform.secrets.open(row.secrets))).toEqual({ appPassword: 'bb-app-password-1' });

    const d = await create('forgeD', { forgeDInternalUrl: 'http://forgejo:3000' });
    const dUpdated = await t.call('forgeD.update', {
      forgeDId: d.forgeDId, gitProviderId: d.gitProviderId, name: 'Forgejo', forgeDUrl: 'https://code.example.com', forgeDInternalUrl: null, accessToken: 'gt-rotated',
    });
    expect(dUpdated.body).toEqual({ ...d, forgeDUrl: 'https://code.example.com', forgeDInternalUrl: null });

    const a = await create('forgeA', { installationId: undefined });
    expect(a.installationId).toBeNull();
    const installed = await t.call('forgeA.update', { forgeAId: a.forgeAId, gitProviderId: a.gitProviderId, name: a.name, installationId: '42' });
    expect(installed.body).toEqual({ ...a, installationId: '42' });
  });

  it('refuses a gitProviderId or organizationId that is not the connection’s, and bad URLs, changing nothing', async () => {
    const b = await create('forgeB');
    const other = await create('forgeB', { name: 'Other GitLab' });
    const base = { forgeBId: b.forgeBId, gitProviderId: b.gitProviderId, name: 'Changed', forgeBUrl: 'https://gitlab.example.com' };
    for (const [input, field] of [
      [{ ...base, gitProviderId: other.gitProviderId }, 'gitProviderId'],
      [{ ...base, forgeBUrl: 'http://169.254.169.254' }, 'forgeBUrl'],
    ] as const) {
      const res = await t.call('forgeB.update', input);
      expect(res.status).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
    }
    const c = await create('forgeC');
    const res = await t.call('forgeC.update', { forgeCId: c.forgeCId, gitProviderId: c.gitProviderId, name: 'x', organizationId: 'org_elsewhere' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['organizationId']);
    const same = await t.call('forgeC.update', { forgeCId: c.forgeCId, gitProviderId: c.gitProviderId, name: 'Same org', organizationId: t.organizationId });
    expect(same.status).toBe(200);
    expect((await t.call('forgeB.one', { forgeBId: b.forgeBId })).body).toEqual(b);
    expect((await t.call('forgeC.one', { forgeCId: c.forgeCId })).body.name).toBe('Same org');
  });
});

describe('removing a forge connection', () => {
  it('is refused while an application or compose stack uses it, and works once none does', async () => {
    const b = await create('forgeB');
    const app = (await t.call('application.create', { name: 'from gitlab', environmentId: env })).body;
    const saved = await t.call('application.saveForgeBProvider', {
      applicationId: app.applicationId, forgeBId: b.forgeBId, forgeBBranch: 'main', forgeBBuildPath: '/', forgeBOwner: 'acme',
      forgeBRepository: 'shop', forgeBProjectId: 7, forgeBPathNamespace: 'acme/shop',
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const refused = await t.call('gitProvider.remove', { gitProviderId: b.gitProviderId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['gitProviderId']);
    expect(refused.body.issues[0].message).toContain('from gitlab');
    expect((await t.call('forgeB.one', { forgeBId: b.forgeBId })).status).toBe(200);

    await t.call('application.disconnectGitProvider', { applicationId: app.applicationId });
    const removed = await t.call('gitProvider.remove', { gitProviderId: b.gitProviderId });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ gitProviderId: b.gitProviderId, kind: 'forgeB', forgeId: b.forgeBId });
    expect((await t.call('forgeB.one', { forgeBId: b.forgeBId })).status).toBe(404);
    expect((await t.call('gitProvider.remove', { gitProviderId: b.gitProviderId })).status).toBe(404);
  });

  it('is refused while a compose stack uses it', async () => {
    const c = await create('forgeC');
    const compose = await t.call('compose.create', { name: 'stack from bitbucket', environmentId: env });
    expect(compose.status, JSON.stringify(compose.body)).toBe(200);
    const used = await t.call('compose.update', { composeId: compose.body.composeId, sourceType: 'forgeC', forgeCId: c.forgeCId });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    const refused = await t.call('gitProvider.remove', { gitProviderId: c.gitProviderId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].message).toContain('stack from bitbucket');
    await t.call('compose.update', { composeId: compose.body.composeId, forgeCId: null });
    expect((await t.call('gitProvider.remove', { gitProviderId: c.gitProviderId })).status).toBe(200);
  });
});

describe('forge connection permissions', () => {
  it('needs canAccessToGitProviders, and for members the connection in accessedGitProviders', async () => {
    const owned = await create('forgeB');
    const member = await addMember(t, 'forge-member@example.com');
    const m = t.as(member.key);
    for (const [op, input] of [
      ['forgeB.forgeBProviders', {}],
      ['gitProvider.getAll', {}],
      ['forgeB.one', { forgeBId: owned.forgeBId }],
      ['forgeB.create', inputs().forgeB.input],
      ['gitProvider.remove', { gitProviderId: owned.gitProviderId }],
    ] as const) {
      expect((await m(op, input)).status, op).toBe(403);
    }

    await t.call('user.assignPermissions', { id: member.userId, canAccessToGitProviders: true });
    expect((await m('forgeB.forgeBProviders')).body).toEqual([]);
    expect((await m('gitProvider.getAll')).body).toEqual([]);
    expect((await m('forgeB.one', { forgeBId: owned.forgeBId })).status).toBe(403);
    expect((await m('forgeB.update', { forgeBId: owned.forgeBId, gitProviderId: owned.gitProviderId, name: 'x', forgeBUrl: 'https://x.example.com' })).status).toBe(403);
    expect((await m('gitProvider.remove', { gitProviderId: owned.gitProviderId })).status).toBe(403);

    // A member's own connection is granted to them on creation.
    const mine = await create('forgeD', { authId: member.userId }, m);
    expect(mine).toMatchObject({ authId: member.userId, userId: member.userId });
    expect((await m('forgeD.one', { forgeDId: mine.forgeDId })).status).toBe(200);
    expect((await m('gitProvider.getAll')).body.map((g: { gitProviderId: string }) => g.gitProviderId)).toEqual([mine.gitProviderId]);
    const perms = (await t.call('user.one', { userId: member.userId })).body.permissions;
    expect(perms.accessedGitProviders).toEqual([mine.gitProviderId]);

    await t.call('user.assignPermissions', { id: member.userId, accessedGitProviders: [mine.gitProviderId, owned.gitProviderId] });
    expect((await m('forgeB.one', { forgeBId: owned.forgeBId })).body).toEqual(owned);
    expect((await m('forgeB.forgeBProviders')).body).toEqual([owned]);

    // Without the grant the access list is not enough.
    await t.call('user.assignPermissions', { id: member.userId, canAccessToGitProviders: false });
    expect((await m('forgeB.one', { forgeBId: owned.forgeBId })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, canAccessToGitProviders: true });
    expect((await m('gitProvider.remove', { gitProviderId: mine.gitProviderId })).status).toBe(200);
  });

  it('lets admins use every connection of the organization', async () => {
    const owned = await create('forgeA');
    const admin = t.as((await addMember(t, 'forge-admin@example.com', 'admin')).key);
    expect((await admin('forgeA.one', { forgeAId: owned.forgeAId })).body).toEqual(owned);
    expect((await admin('forgeA.forgeAProviders')).body).toContainEqual(owned);
    const updated = await admin('forgeA.update', { forgeAId: owned.forgeAId, gitProviderId: owned.gitProviderId, name: 'Renamed by admin' });
    expect(updated.body.name).toBe('Renamed by admin');
  });

  it('answers NOT_FOUND to another organization, and lists only its own', async () => {
    const owned = await create('forgeC');
    const other = await t.call('organization.create', { name: 'Forges elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('forgeC.one', { forgeCId: owned.forgeCId })).status).toBe(404);
    expect((await outsider('forgeC.update', { forgeCId: owned.forgeCId, gitProviderId: owned.gitProviderId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('gitProvider.remove', { gitProviderId: owned.gitProviderId })).status).toBe(404);
    expect((await outsider('forgeC.forgeCProviders')).body).toEqual([]);
    expect((await outsider('gitProvider.getAll')).body).toEqual([]);
    // A connection made there is not visible here.
    const theirs = await create('forgeC', {}, outsider);
    expect(theirs.organizationId).toBe(other.body.organizationId);
    expect((await t.call('forgeC.one', { forgeCId: theirs.forgeCId })).status).toBe(404);
    expect((await t.call('forgeC.one', { forgeCId: owned.forgeCId })).body.name).toBe('Bitbucket');
  });

  it('calls the forge for repositories and connection tests (forge-repositories.int.test.ts); a connection without a token says so', async () => {
    const b = await create('forgeB', { accessToken: '', refreshToken: '' });
    const res = await t.call('forgeB.testConnection', { forgeBId: b.forgeBId });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['forgeBId'], message: 'forgeB (GitLab): the connection has no access token yet (forgeB.update accessToken)' }]);
  });
});
