import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateEd25519SshKeyPair } from '@skiff/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, type Call, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const run = promisify(execFile);

let t: TestPlatform;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skiff-settings-'));
  t = await startTestPlatform({ publicIp: '203.0.113.7' });
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ok = async (call: Call, operation: string, input: Record<string, unknown> = {}) => {
  const res = await call(operation, input);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

const refuses = async (operation: string, input: Record<string, unknown>, field: string) => {
  const before = (await t.call('settings.get')).body;
  const res = await t.call(operation, input);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(field);
  expect((await t.call('settings.get')).body).toEqual(before);
};

const row = () => t.db.selectFrom('platformSettings').selectAll().executeTakeFirstOrThrow();

describe('host settings', () => {
  it('start empty, with the configured public IP', async () => {
    expect(await ok(t.call, 'settings.getIp')).toEqual({ ip: '203.0.113.7' });
    expect(await ok(t.call, 'settings.get')).toEqual({
      host: null,
      certificateType: 'none',
      letsEncryptEmail: null,
      https: false,
      enableContainerCleanup: false,
      hasSSHPrivateKey: false,
      sshPublicKey: null,
      sshKeyFingerprint: null,
      publicIp: '203.0.113.7',
      updatedAt: null,
    });
  });

  it('answer a null IP when none is configured', async () => {
    const bare = await startTestPlatform();
    try {
      expect(await ok(bare.call, 'settings.getIp')).toEqual({ ip: null });
      expect((await ok(bare.call, 'settings.get')).publicIp).toBeNull();
    } finally {
      await bare.close();
    }
  });

  it('keep the version operations working', async () => {
    expect(await ok(t.call, 'settings.getPlatformVersion')).toEqual({ version: '0.0.0-test' });
    expect(await ok(t.call, 'settings.getReleaseTag')).toEqual({ tag: 'v0.0.0-test' });
  });

  it('say plainly what a platform without a supervisor or an agent channel cannot do', async () => {
    const reload = await t.call('settings.reloadServer', {});
    expect(reload.status).toBe(400);
    expect(reload.body.message).toMatch(/without a supervisor that would start it again/);
    const clean = await t.call('settings.cleanAll', {});
    expect(clean.status).toBe(400);
    expect(clean.body.message).toMatch(/^The agent of server local \(the platform host\) did not answer/);
    const update = await t.call('settings.updateServer', {});
    expect(update.status).toBe(200);
    expect(update.body.agents).toEqual([expect.objectContaining({ serverId: 'local', status: 'unreachable' })]);
  });
});

describe('settings.assignDomainServer', () => {
  it('records the platform domain, normalized, with https defaulting from the certificate type', async () => {
    const acme = await ok(t.call, 'settings.assignDomainServer', {
      host: 'Panel.Example.COM.',
      certificateType: 'acme',
      letsEncryptEmail: 'ops@example.com',
    });
    expect(acme).toMatchObject({ host: 'panel.example.com', certificateType: 'acme', letsEncryptEmail: 'ops@example.com', https: true });
    expect(typeof acme.updatedAt).toBe('string');
    const { warnings, ...settings } = acme;
    expect(warnings).toEqual([]);
    expect(await ok(t.call, 'settings.get')).toEqual(settings);

    // The ACME address is kept when the domain changes again without one.
    const again = await ok(t.call, 'settings.assignDomainServer', { host: 'skiff.example.com', certificateType: 'acme' });
    expect(again).toMatchObject({ host: 'skiff.example.com', letsEncryptEmail: 'ops@example.com', https: true });

    const plain = await ok(t.call, 'settings.assignDomainServer', { host: 'bücher.example', certificateType: 'none' });
    expect(plain).toMatchObject({ host: 'xn--bcher-kva.example', certificateType: 'none', https: false });
    const behindTls = await ok(t.call, 'settings.assignDomainServer', { host: 'edge.example.com', certificateType: 'none', https: true });
    expect(behindTls).toMatchObject({ certificateType: 'none', https: true });
  });

  it('refuses bad hosts, naming the field and changing nothing', async () => {
    for (const host of ['https://panel.example.com', 'panel.example.com:8443', 'panel.example.com/admin', '*.example.com', '203.0.113.7', 'bad_label.example.com', '-x.example.com']) {
      await refuses('settings.assignDomainServer', { host, certificateType: 'none' }, 'host');
    }
    await refuses('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'sometimes' }, 'certificateType');
    await refuses('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'acme', letsEncryptEmail: 'not-an-email' }, 'letsEncryptEmail');
    await refuses('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'acme', https: false }, 'https');
    await refuses('settings.assignDomainServer', { certificateType: 'none' }, 'host');
  });

  it('is undone by an empty host: the platform domain is cleared, the other settings kept', async () => {
    const assigned = await ok(t.call, 'settings.assignDomainServer', { host: 'undo.example.com', certificateType: 'none' });
    expect(assigned).toMatchObject({ host: 'undo.example.com', warnings: [] });
    const proxyCommands = () => t.db.selectFrom('commands').select('id').where('workloadKey', '=', 'proxy:local').execute();
    const before = (await proxyCommands()).length;
    const cleared = await ok(t.call, 'settings.assignDomainServer', { host: '', certificateType: 'none' });
    expect(cleared).toMatchObject({ host: null, certificateType: 'none', warnings: [] });
    expect((await ok(t.call, 'settings.get')).host).toBeNull();
    // The platform host's proxy is configured again, without the domain.
    expect((await proxyCommands()).length).toBe(before + 1);
    expect((await row()).host).toBeNull();
  });

  it('warns when the control plane listens on loopback only (SKIFF_HOST), where the proxy cannot reach it', async () => {
    const local = await startTestPlatform({ listenHost: '127.0.0.1', platformUpstream: 'host.docker.internal:3000' });
    try {
      const answer = await ok(local.call, 'settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'none' });
      expect(answer.host).toBe('panel.example.com');
      expect(answer.warnings).toEqual([expect.stringContaining('listens on 127.0.0.1 only (SKIFF_HOST)')]);
      expect(answer.warnings[0]).toContain('SKIFF_HOST=0.0.0.0');
    } finally {
      await local.close();
    }
    const open = await startTestPlatform({ listenHost: '0.0.0.0' });
    try {
      expect((await ok(open.call, 'settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'none' })).warnings).toEqual([]);
    } finally {
      await open.close();
    }
  });

  it('needs an ACME address for acme certificates when none is stored', async () => {
    const fresh = await startTestPlatform();
    try {
      const res = await fresh.call('settings.assignDomainServer', { host: 'panel.example.com', certificateType: 'acme' });
      expect(res.status).toBe(400);
      expect(res.body.issues[0].path).toEqual(['letsEncryptEmail']);
      expect((await fresh.call('settings.get')).body.host).toBeNull();
    } finally {
      await fresh.close();
    }
  });

  it('refuses a host that already routes to a service on the platform host', async () => {
    const env = (await ok(t.call, 'project.create', { name: 'routed' })).environments[0].environmentId;
    const app = await ok(t.call, 'application.create', { name: 'web', environmentId: env });
    await ok(t.call, 'domain.create', { host: 'shop.example.com', applicationId: app.applicationId });
    await refuses('settings.assignDomainServer', { host: 'SHOP.example.com', certificateType: 'none' }, 'host');
  });

  it('serves custom certificates only when a stored one covers the host', async () => {
    await refuses('settings.assignDomainServer', { host: 'admin.example.org', certificateType: 'custom' }, 'certificateType');
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
      '-keyout', 'panel.key', '-out', 'panel.pem', '-days', '30', '-subj', '/CN=admin.example.org',
      '-addext', 'subjectAltName=DNS:admin.example.org',
    ], { cwd: dir });
    await ok(t.call, 'certificates.create', {
      name: 'panel',
      certificateData: await readFile(join(dir, 'panel.pem'), 'utf8'),
      privateKey: await readFile(join(dir, 'panel.key'), 'utf8'),
      organizationId: t.organizationId,
    });
    const custom = await ok(t.call, 'settings.assignDomainServer', { host: 'admin.example.org', certificateType: 'custom' });
    expect(custom).toMatchObject({ host: 'admin.example.org', certificateType: 'custom', https: true });
  });
});

describe('settings.updateContainerCleanup', () => {
  it('records the switch', async () => {
    expect((await ok(t.call, 'settings.updateContainerCleanup', { enableContainerCleanup: true })).enableContainerCleanup).toBe(true);
    expect((await ok(t.call, 'settings.get')).enableContainerCleanup).toBe(true);
    expect((await ok(t.call, 'settings.updateContainerCleanup', { enableContainerCleanup: false })).enableContainerCleanup).toBe(false);
    await refuses('settings.updateContainerCleanup', { enableContainerCleanup: 'yes' }, 'enableContainerCleanup');
    await refuses('settings.updateContainerCleanup', {}, 'enableContainerCleanup');
  });
});

describe('the host SSH private key', () => {
  it('is stored sealed, shown only by its public half, and removed on request', async () => {
    const pair = generateEd25519SshKeyPair('host@skiff');
    const saved = await ok(t.call, 'settings.saveSSHPrivateKey', { sshPrivateKey: pair.privateKey });
    expect(saved).toMatchObject({ hasSSHPrivateKey: true, sshPublicKey: pair.publicKey, sshKeyFingerprint: pair.fingerprint });
    const read = await ok(t.call, 'settings.get');
    expect(read).toEqual(saved);
    const secret = pair.privateKey.split('\n')[2]!;
    for (const body of [saved, read]) {
      expect(JSON.stringify(body)).not.toContain('PRIVATE KEY');
      expect(JSON.stringify(body)).not.toContain(secret);
    }
    const stored = await row();
    expect(stored.sshPrivateKey).not.toBeNull();
    expect(stored.sshPrivateKey).not.toContain('PRIVATE KEY');
    expect(stored.sshPrivateKey).not.toContain(secret);
    expect(t.platform.secrets.open(stored.sshPrivateKey!)).toBe(pair.privateKey);

    const cleaned = await ok(t.call, 'settings.cleanSSHPrivateKey');
    expect(cleaned).toMatchObject({ hasSSHPrivateKey: false, sshPublicKey: null, sshKeyFingerprint: null });
    expect((await row()).sshPrivateKey).toBeNull();
    // Cleaning again changes nothing.
    expect((await ok(t.call, 'settings.cleanSSHPrivateKey')).hasSSHPrivateKey).toBe(false);
  });

  it('accepts PEM keys and replaces the stored key', async () => {
    const first = generateEd25519SshKeyPair();
    await ok(t.call, 'settings.saveSSHPrivateKey', { sshPrivateKey: first.privateKey });
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'sec1', format: 'pem' }) as string;
    const saved = await ok(t.call, 'settings.saveSSHPrivateKey', { sshPrivateKey: pem });
    expect(saved.hasSSHPrivateKey).toBe(true);
    expect(saved.sshPublicKey).toMatch(/^ecdsa-sha2-nistp256 AAAA/);
    expect(saved.sshPublicKey).not.toBe(first.publicKey);
    expect(t.platform.secrets.open((await row()).sshPrivateKey!)).toBe(pem);
  });

  it('refuses what is not a usable private key, naming sshPrivateKey and keeping the stored one', async () => {
    const pair = generateEd25519SshKeyPair();
    await ok(t.call, 'settings.saveSSHPrivateKey', { sshPrivateKey: pair.privateKey });
    const encrypted = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' }) as string;
    for (const sshPrivateKey of ['', 'not a key', pair.publicKey, encrypted]) {
      await refuses('settings.saveSSHPrivateKey', { sshPrivateKey }, 'sshPrivateKey');
    }
    await refuses('settings.saveSSHPrivateKey', {}, 'sshPrivateKey');
    const res = await t.call('settings.saveSSHPrivateKey', { sshPrivateKey: encrypted });
    expect(res.body.message).toMatch(/passphrase/);
    expect(t.platform.secrets.open((await row()).sshPrivateKey!)).toBe(pair.privateKey);
  });
});

describe('who may read and change host settings', () => {
  const writes = (): [string, Record<string, unknown>][] => [
    ['settings.assignDomainServer', { host: 'stolen.example.com', certificateType: 'none' }],
    ['settings.updateContainerCleanup', { enableContainerCleanup: true }],
    ['settings.saveSSHPrivateKey', { sshPrivateKey: generateEd25519SshKeyPair().privateKey }],
    ['settings.cleanSSHPrivateKey', {}],
  ];

  it('refuses the host settings to admins who are not platform administrators, reads and writes, but answers them the IP', async () => {
    await ok(t.call, 'settings.saveSSHPrivateKey', { sshPrivateKey: generateEd25519SshKeyPair().privateKey });
    await ok(t.call, 'settings.updateContainerCleanup', { enableContainerCleanup: false });
    const admin = await addMember(t, 'admin@test.local', 'admin');
    // The admin's own organization: they own it, and still are not a platform administrator.
    const own = await ok(t.as(admin.key), 'organization.create', { name: 'Tenant' });
    const ownerKey = (await ok(t.as(admin.key), 'user.createApiKey', { name: 'tenant', metadata: { organizationId: own.organizationId } })).key;
    const before = await row();

    for (const key of [admin.key, ownerKey]) {
      const as = t.as(key);
      // The platform domain, its ACME address, the host's SSH key: the platform's, not the organization's.
      const read = await as('settings.get');
      expect(read.status, JSON.stringify(read.body)).toBe(403);
      expect(read.body.code).toBe('FORBIDDEN');
      expect(JSON.stringify(read.body)).not.toContain('ssh-ed25519');
      // The address the organization's own domains on the platform host point at.
      expect(await ok(as, 'settings.getIp')).toEqual({ ip: '203.0.113.7' });
      for (const [op, input] of writes()) {
        const res = await as(op, input);
        expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
    }
    expect(await row()).toEqual(before);
  });

  it('refuses members, even with canAccessToSSHKeys', async () => {
    const member = await addMember(t, 'member@test.local');
    const m = t.as(member.key);
    for (const op of ['settings.get', 'settings.getIp']) expect((await m(op)).status, op).toBe(403);
    for (const [op, input] of writes()) expect((await m(op, input)).status, op).toBe(403);
    await ok(t.call, 'user.assignPermissions', { id: member.userId, canAccessToSSHKeys: true });
    const res = await m('settings.saveSSHPrivateKey', { sshPrivateKey: generateEd25519SshKeyPair().privateKey });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/platform administrator/);
    expect((await m('settings.cleanSSHPrivateKey')).status).toBe(403);
    expect((await ok(t.call, 'settings.get')).hasSSHPrivateKey).toBe(true);
  });

  it('lets the platform administrator change them from any of their organizations', async () => {
    const other = await ok(t.call, 'organization.create', { name: 'Second' });
    const key = (await ok(t.call, 'user.createApiKey', { name: 'second', metadata: { organizationId: other.organizationId } })).key;
    const res = await ok(t.as(key), 'settings.updateContainerCleanup', { enableContainerCleanup: true });
    expect(res.enableContainerCleanup).toBe(true);
    expect((await ok(t.call, 'settings.get')).enableContainerCleanup).toBe(true);
  });
});
