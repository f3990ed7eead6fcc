import { generateKeyPairSync } from 'node:crypto';
import { generateEd25519SshKeyPair, readSshKeyPair } from '@skiff/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform();
  env = (await t.call('project.create', { name: 'keys' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const generate = async (overrides: Record<string, unknown> = {}, call = t.call) => {
  const res = await call('sshKey.generate', { name: 'deploy key', ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const privateOf = async (sshKeyId: string) => {
  const row = await t.db.selectFrom('sshKeys').selectAll().where('id', '=', sshKeyId).executeTakeFirstOrThrow();
  return { row, privateKey: t.platform.secrets.open(row.privateKey) };
};

describe('SSH keys', () => {
  it('generates an ed25519 pair, answering the OpenSSH public key and never the private one', async () => {
    const key = await generate({ description: 'for the shop repository' });
    expect(key).toMatchObject({ name: 'deploy key', description: 'for the shop repository', keyType: 'ssh-ed25519', organizationId: t.organizationId });
    expect(key.sshKeyId).toMatch(/^ssh_/);
    expect(key.publicKey).toMatch(new RegExp(`^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI\\S+ skiff-${key.sshKeyId}$`));
    expect(key.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(JSON.stringify(key)).not.toContain('PRIVATE');

    const { row, privateKey } = await privateOf(key.sshKeyId);
    expect(JSON.stringify(row)).not.toContain('PRIVATE KEY');
    expect(privateKey.startsWith('-----BEGIN OPENSSH PRIVATE KEY-----')).toBe(true);
    expect(readSshKeyPair(key.publicKey, privateKey)).toMatchObject({ ok: true, pair: { publicKey: key.publicKey, fingerprint: key.fingerprint } });
    expect((await generate()).publicKey).not.toBe(key.publicKey);
  });

  it('stores a pair given in OpenSSH format or PEM, keeping the public key as an authorized_keys line', async () => {
    const openssh = generateEd25519SshKeyPair('me@laptop');
    const a = await t.call('sshKey.create', { name: 'laptop', publicKey: openssh.publicKey, privateKey: openssh.privateKey });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body).toMatchObject({ publicKey: openssh.publicKey, keyType: 'ssh-ed25519', fingerprint: openssh.fingerprint, description: null });
    expect((await privateOf(a.body.sshKeyId)).privateKey).toBe(openssh.privateKey);

    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const b = await t.call('sshKey.create', {
      name: 'ci',
      publicKey: rsa.publicKey.export({ type: 'spki', format: 'pem' }),
      privateKey: rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }),
    });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    expect(b.body.keyType).toBe('ssh-rsa');
    expect(b.body.publicKey).toMatch(/^ssh-rsa AAAAB3NzaC1yc2E\S+$/);
    expect(JSON.stringify(b.body)).not.toContain('PRIVATE');
  });

  it('refuses keys that do not read or do not match, naming the field and storing nothing', async () => {
    const before = (await t.call('sshKey.all')).body.length;
    const pair = generateEd25519SshKeyPair();
    const other = generateEd25519SshKeyPair();
    const encrypted = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' });
    for (const [input, field] of [
      [{ publicKey: pair.publicKey, privateKey: 'not a key' }, 'privateKey'],
      [{ publicKey: pair.publicKey, privateKey: encrypted }, 'privateKey'],
      [{ publicKey: 'ssh-ed25519 garbage', privateKey: pair.privateKey }, 'publicKey'],
      [{ publicKey: other.publicKey, privateKey: pair.privateKey }, 'publicKey'],
      [{ publicKey: '', privateKey: pair.privateKey }, 'publicKey'],
    ] as const) {
      const res = await t.call('sshKey.create', { name: 'bad', ...input });
      expect(res.status, JSON.stringify(input).slice(0, 80)).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
      expect(JSON.stringify(res.body)).not.toContain('PRIVATE KEY-----\n');
    }
    expect((await t.call('sshKey.all')).body.length).toBe(before);
  });

  it('updates name and description only, and lists keys oldest first', async () => {
    const key = await generate({ name: 'old' });
    const res = await t.call('sshKey.update', { sshKeyId: key.sshKeyId, name: 'new', description: 'renamed' });
    expect(res.body).toEqual({ ...key, name: 'new', description: 'renamed' });
    const listed = (await t.call('sshKey.all')).body;
    expect(listed.at(-1)).toEqual(res.body);
    expect((await t.call('sshKey.one', { sshKeyId: 'key_missing' })).status).toBe(404);
  });

  it('refuses removal while an application or compose stack clones with it', async () => {
    const key = await generate();
    const app = (await t.call('application.create', { name: 'over ssh', environmentId: env })).body;
    const saved = await t.call('application.saveGitProvider', {
      applicationId: app.applicationId, customGitUrl: 'git@git.example.com:acme/shop.git', customGitBranch: 'main',
      customGitBuildPath: '/', watchPaths: null, customGitSSHKeyId: key.sshKeyId,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const compose = (await t.call('compose.create', { name: 'stack over ssh', environmentId: env })).body;
    const used = await t.call('compose.update', { composeId: compose.composeId, customGitUrl: 'git@git.example.com:acme/stack.git', customGitSSHKeyId: key.sshKeyId });
    expect(used.status, JSON.stringify(used.body)).toBe(200);

    const refused = await t.call('sshKey.remove', { sshKeyId: key.sshKeyId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['sshKeyId']);
    expect(refused.body.issues[0].message).toContain('over ssh');
    await t.call('application.disconnectGitProvider', { applicationId: app.applicationId });
    const still = await t.call('sshKey.remove', { sshKeyId: key.sshKeyId });
    expect(still.status).toBe(400);
    expect(still.body.issues[0].message).toContain('stack over ssh');
    await t.call('compose.update', { composeId: compose.composeId, customGitSSHKeyId: null });

    const removed = await t.call('sshKey.remove', { sshKeyId: key.sshKeyId });
    expect(removed.body).toEqual(key);
    expect((await t.call('sshKey.one', { sshKeyId: key.sshKeyId })).status).toBe(404);
  });
});

describe('SSH key permissions', () => {
  it('need canAccessToSSHKeys for every operation; admins hold it', async () => {
    const key = await generate();
    const member = await addMember(t, 'keys-member@example.com');
    const m = t.as(member.key);
    for (const [op, input] of [
      ['sshKey.all', {}],
      ['sshKey.one', { sshKeyId: key.sshKeyId }],
      ['sshKey.generate', { name: 'x' }],
      ['sshKey.update', { sshKeyId: key.sshKeyId, name: 'x' }],
      ['sshKey.remove', { sshKeyId: key.sshKeyId }],
    ] as const) {
      expect((await m(op, input)).status, op).toBe(403);
    }
    await t.call('user.assignPermissions', { id: member.userId, canAccessToSSHKeys: true });
    expect((await m('sshKey.one', { sshKeyId: key.sshKeyId })).body).toEqual(key);
    const own = await generate({ name: 'member key' }, m);
    expect((await m('sshKey.remove', { sshKeyId: own.sshKeyId })).status).toBe(200);

    const admin = t.as((await addMember(t, 'keys-admin@example.com', 'admin')).key);
    expect((await admin('sshKey.update', { sshKeyId: key.sshKeyId, name: 'by admin' })).body.name).toBe('by admin');
  });

  it('answers NOT_FOUND to another organization, which cannot reference our keys either', async () => {
    const key = await generate({ name: 'ours' });
    const other = await t.call('organization.create', { name: 'Keys elsewhere' });
    const keyOther = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(keyOther);
    expect((await outsider('sshKey.one', { sshKeyId: key.sshKeyId })).status).toBe(404);
    expect((await outsider('sshKey.update', { sshKeyId: key.sshKeyId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('sshKey.remove', { sshKeyId: key.sshKeyId })).status).toBe(404);
    expect((await outsider('sshKey.all')).body).toEqual([]);

    const theirEnv = (await outsider('project.create', { name: 'theirs' })).body.environments[0].environmentId;
    const theirApp = (await outsider('application.create', { name: 'theirs', environmentId: theirEnv })).body;
    const res = await outsider('application.saveGitProvider', {
      applicationId: theirApp.applicationId, customGitUrl: 'git@example.com:x.git', customGitBranch: 'main',
      customGitBuildPath: null, watchPaths: null, customGitSSHKeyId: key.sshKeyId,
    });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['customGitSSHKeyId']);
    expect((await t.call('sshKey.one', { sshKeyId: key.sshKeyId })).body.name).toBe('ours');
  });
});
