// The compose file as a stack deploys it, on a real Postgres: getConvertedCompose,
// randomizeCompose, isolatedDeployment, loadServices, loadMountsByService, and the fetch of a
// git source's file on the control plane (fetchSourceType, loadServices `fetch`) from a git
// server over HTTP (with a login) and over SSH (with the stack's key), both on loopback.
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { convertedCompose } from '@skiff/domain';
import { Command } from '@skiff/proto';
import {
  generateTestSshKey,
  startGitServer,
  startSshGitServer,
  type TestGitServer,
  type TestSshGitServer,
  type TestSshKey,
} from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { TEMP_PREFIX, readGitFile } from './compose-git.js';

/** The test git servers listen on loopback: the operator's allowance (SKIFF_OUTBOUND_ALLOW_PRIVATE=1). */
const LOOPBACK_ALLOWED = { allowPrivate: true };

const USER = 'deployer';
const PASSWORD = 'gitS3cret-pw';

let t: TestPlatform;
let env: string;
let projectId: string;
let git: TestGitServer;
let sshd: TestSshGitServer;
let key: TestSshKey;
beforeAll(async () => {
  [t, git, sshd, key] = await Promise.all([
    startTestPlatform(),
    startGitServer({ auth: { username: USER, password: PASSWORD } }),
    startSshGitServer(),
    generateTestSshKey('compose'),
  ]);
  await sshd.authorize(key.publicKey);
  const project = (await t.call('project.create', { name: 'files' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
}, 60_000);
afterAll(async () => {
  await Promise.all([t?.close(), git?.stop(), sshd?.stop()]);
});

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};
const refusal = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
  return { field: r.body.issues[0]?.path[0] as string, message: r.body.issues[0]?.message as string };
};
const unique = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

const STACK = `# the shop
services:
  web:
    image: busybox:latest
    depends_on: [cache]
    volumes:
      - ./site:/www:ro
  cache:
    image: redis:8
    volumes:
      - data:/data
      - type: volume
        source: backups
        target: /backups
volumes:
  data:
  backups:
    external: true
`;

async function stack(overrides: Record<string, unknown> = {}) {
  return (await ok('compose.create', { name: 'Shop', environmentId: env, composeFile: STACK, ...overrides })) as { composeId: string; appName: string };
}

describe('compose.getConvertedCompose', () => {
  it('shows the stored file unchanged when nothing converts it', async () => {
    const s = await stack();
    expect(await ok('compose.getConvertedCompose', { composeId: s.composeId })).toEqual({
      composeFile: STACK,
      suffix: null,
      isolatedNetwork: null,
      routedServices: [],
    });
  });

  it("applies the stack's settings and routes: randomized, isolated, routed services on the platform network with their alias", async () => {
    const s = await stack();
    await ok('compose.update', { composeId: s.composeId, randomize: true, suffix: 'r1', isolatedDeployment: true });
    await ok('domain.create', { host: `${s.appName}.example.com`, composeId: s.composeId, serviceName: 'web', port: 8080 });
    const converted = await ok('compose.getConvertedCompose', { composeId: s.composeId });
    expect(converted).toMatchObject({ suffix: 'r1', isolatedNetwork: s.appName, routedServices: ['web-r1'] });
    const file = converted.composeFile as string;
    expect(file).toContain('# the shop');
    expect(file).toContain('  web-r1:');
    expect(file).toContain('depends_on: [cache-r1]');
    expect(file).toContain('- data-r1:/data');
    expect(file).toContain('- ./site:/www:ro');
    expect(file).toContain(`- web-r1.${s.appName}`);
    expect(file).toMatch(new RegExp(`${s.appName}:\\n    external: true`));
    expect(file).toMatch(/skiff-network:\n {4}external: true/);
    // Exactly the library's conversion, and converting it again changes nothing.
    const settings = { appName: s.appName, randomize: true, suffix: 'r1', isolatedDeployment: true, isolatedDeploymentsVolume: false, routedServices: ['web'] };
    expect(file).toBe(convertedCompose(STACK, settings));
    expect(convertedCompose(file, settings)).toBe(file);
  });

  it('refuses what does not convert, naming the field', async () => {
    expect(await refusal('compose.getConvertedCompose', { composeId: (await stack({ composeFile: '' })).composeId })).toMatchObject({
      field: 'composeFile',
      message: 'the stack has no compose file (compose.update composeFile)',
    });
    expect((await refusal('compose.getConvertedCompose', { composeId: (await stack({ composeFile: 'a: [' })).composeId })).field).toBe('composeFile');
    const git = await stack({ sourceType: 'git', composeFile: '' });
    expect((await refusal('compose.getConvertedCompose', { composeId: git.composeId })).message).toMatch(/compose.fetchSourceType/);
    const noSuffix = await stack();
    await ok('compose.update', { composeId: noSuffix.composeId, randomize: true });
    expect((await refusal('compose.getConvertedCompose', { composeId: noSuffix.composeId })).field).toBe('suffix');
  });
});

describe('compose.randomizeCompose and compose.isolatedDeployment', () => {
  it('turn their setting on (a random suffix saved when none is set), answer the file as it will deploy, and stay idempotent', async () => {
    const s = await stack();
    const domain = await ok('domain.create', { host: `${s.appName}.example.com`, composeId: s.composeId, serviceName: 'web', port: 8080 });
    const first = await ok('compose.randomizeCompose', { composeId: s.composeId });
    expect(first.suffix).toMatch(/^[0-9a-f]{8}$/);
    expect(first.composeFile).toContain(`  web-${first.suffix}:`);
    expect(await ok('compose.one', { composeId: s.composeId })).toMatchObject({ randomize: true, suffix: first.suffix });
    expect(await ok('compose.randomizeCompose', { composeId: s.composeId })).toEqual(first);
    // The route dials the renamed service's alias.
    expect((await routeOf(domain.domainId)).upstream).toBe(`web-${first.suffix}.${s.appName}`);

    const isolated = await ok('compose.isolatedDeployment', { composeId: s.composeId });
    expect(isolated).toMatchObject({ suffix: first.suffix, isolatedNetwork: s.appName });
    expect(isolated.composeFile).toBe((await ok('compose.getConvertedCompose', { composeId: s.composeId })).composeFile);
    expect(await ok('compose.one', { composeId: s.composeId })).toMatchObject({ isolatedDeployment: true, composeFile: STACK });

    await ok('compose.update', { composeId: s.composeId, suffix: 'mine', randomize: false });
    expect((await ok('compose.randomizeCompose', { composeId: s.composeId })).suffix).toBe('mine');
  });

  it('change nothing when the file does not convert', async () => {
    const s = await stack({ composeFile: '' });
    expect((await refusal('compose.randomizeCompose', { composeId: s.composeId })).field).toBe('composeFile');
    expect((await refusal('compose.isolatedDeployment', { composeId: s.composeId })).field).toBe('composeFile');
    expect(await ok('compose.one', { composeId: s.composeId })).toMatchObject({ randomize: false, suffix: null, isolatedDeployment: false });
  });
});

/** The newest proxy route of a domain on the platform host. */
async function routeOf(domainId: string) {
  const row = await t.db.selectFrom('commands').select('payload').where('workloadKey', '=', 'proxy:local').orderBy('position', 'desc').executeTakeFirstOrThrow();
  const payload = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload)).payload;
  if (payload?.$case !== 'applyProxyConfig') throw new Error('not a proxy config');
  return (JSON.parse(payload.value.inputJson).routes as { domainId: string; upstream: string }[]).find((r) => r.domainId === domainId)!;
}

describe('compose.loadServices, loadMountsByService and getDefaultCommand', () => {
  it('list the services of the stored file, and the mounts of one as deployed', async () => {
    const s = await stack();
    expect(await ok('compose.loadServices', { composeId: s.composeId })).toEqual(['web', 'cache']);
    expect(await ok('compose.loadServices', { composeId: s.composeId, type: 'cache' })).toEqual(['web', 'cache']);
    // A raw stack has nothing to fetch.
    expect(await ok('compose.loadServices', { composeId: s.composeId, type: 'fetch' })).toEqual(['web', 'cache']);
    const project = s.appName.toLowerCase().replace(/[^a-z0-9_-]/g, '');
    expect(await ok('compose.loadMountsByService', { composeId: s.composeId, serviceName: 'cache' })).toEqual([
      { type: 'volume', source: 'data', volumeName: `${project}_data`, target: '/data', readOnly: false },
      { type: 'volume', source: 'backups', volumeName: 'backups', target: '/backups', readOnly: false },
    ]);
    expect(await ok('compose.loadMountsByService', { composeId: s.composeId, serviceName: 'web' })).toEqual([
      { type: 'bind', source: './site', volumeName: null, target: '/www', readOnly: true },
    ]);
    await ok('compose.update', { composeId: s.composeId, randomize: true, suffix: 'z9' });
    for (const serviceName of ['cache', 'cache-z9']) {
      expect((await ok('compose.loadMountsByService', { composeId: s.composeId, serviceName }))[0]).toMatchObject({ source: 'data-z9', volumeName: `${project}_data-z9` });
    }
    expect((await refusal('compose.loadMountsByService', { composeId: s.composeId, serviceName: 'db' })).field).toBe('serviceName');
    expect(await ok('compose.getDefaultCommand', { composeId: s.composeId })).toEqual({
      command: 'up -d --build --remove-orphans',
      argv: ['up', '-d', '--build', '--remove-orphans'],
      custom: false,
    });
    await ok('compose.update', { composeId: s.composeId, command: "up -d 'web' --scale 'web=2'" });
    expect((await ok('compose.getDefaultCommand', { composeId: s.composeId })).command).toBe('up -d web --scale web=2');
    expect((await refusal('compose.loadServices', { composeId: (await stack({ composeFile: 'services: 3' })).composeId })).field).toBe('composeFile');
  });
});

describe('fetching a git source on the control plane', () => {
  const leftovers = async () => (await readdir(tmpdir())).filter((name) => name.startsWith(TEMP_PREFIX));

  it('stores the file at composePath over http with the login in the URL, and lists its services (fetchSourceType, loadServices fetch)', async () => {
    const repo = await git.createRepo(unique('shop'), { 'docker-compose.yml': STACK, 'deploy/prod.yml': 'services:\n  api:\n    image: busybox\n' });
    const s = await stack({ sourceType: 'git', composeFile: '' });
    await ok('compose.update', { composeId: s.composeId, customGitUrl: repo.authUrl, customGitBranch: 'main' });
    const fetched = await ok('compose.fetchSourceType', { composeId: s.composeId });
    expect(fetched).toMatchObject({ composeId: s.composeId, composeFile: STACK, sourceType: 'git' });

    await ok('compose.update', { composeId: s.composeId, composePath: './deploy/prod.yml' });
    expect(await ok('compose.loadServices', { composeId: s.composeId })).toEqual(['web', 'cache']);
    expect(await ok('compose.loadServices', { composeId: s.composeId, type: 'fetch' })).toEqual(['api']);
    expect((await ok('compose.one', { composeId: s.composeId })).composeFile).toBe('services:\n  api:\n    image: busybox\n');

    // A new commit on another branch.
    await repo.commit({ 'deploy/prod.yml': 'services:\n  api:\n    image: busybox\n  worker:\n    image: busybox\n' }, { branch: 'next' });
    await ok('compose.update', { composeId: s.composeId, customGitBranch: 'next' });
    expect(await ok('compose.loadServices', { composeId: s.composeId, type: 'fetch' })).toEqual(['api', 'worker']);
    expect(await leftovers()).toEqual([]);
  });

  it('refuses, naming the field and changing nothing: no such branch, file, folder, link or compose content, a wrong login, a forge source without its connection', async () => {
    const repo = await git.createRepo(unique('odd'), {
      'docker-compose.yml': STACK,
      'notes.txt': 'just: [text',
      'dir/inner.yml': STACK,
      'link.yml': { link: '../../../../etc/passwd' },
    });
    const s = await stack({ sourceType: 'git', composeFile: '' });
    await ok('compose.update', { composeId: s.composeId, customGitUrl: repo.authUrl, customGitBranch: 'main' });
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ customGitBranch: 'nope' }, 'customGitBranch', /no branch nope/],
      [{ composePath: 'missing.yml' }, 'composePath', /no file missing.yml on branch main/],
      [{ composePath: 'dir' }, 'composePath', /dir is not a file/],
      [{ composePath: 'notes.txt' }, 'composePath', /notes.txt is not a compose file/],
      [{ composePath: 'link.yml' }, 'composePath', /link.yml is not a compose file/],
      [{ customGitUrl: repo.authUrl.replace(PASSWORD, 'wrong-password') }, 'customGitUrl', /git clone failed/],
    ];
    for (const [change, field, message] of cases) {
      await ok('compose.update', { composeId: s.composeId, customGitUrl: repo.authUrl, customGitBranch: 'main', composePath: 'docker-compose.yml', ...change });
      for (const op of ['compose.fetchSourceType', 'compose.loadServices']) {
        const r = await refusal(op, op === 'compose.loadServices' ? { composeId: s.composeId, type: 'fetch' } : { composeId: s.composeId });
        expect(r, `${op} ${JSON.stringify(change)}`).toMatchObject({ field });
        expect(r.message).toMatch(message);
        expect(r.message).not.toContain(PASSWORD);
      }
      expect((await ok('compose.one', { composeId: s.composeId })).composeFile).toBe('');
    }
    const forge = await stack({ sourceType: 'forgeB' });
    expect((await refusal('compose.fetchSourceType', { composeId: forge.composeId })).field).toBe('forgeBId');
    expect(await leftovers()).toEqual([]);
  });

  it('clones over ssh with the stack key only, and says why another key is refused', async () => {
    const stored = await ok('sshKey.create', { name: unique('compose-key'), publicKey: key.publicKey, privateKey: key.privateKey });
    const repo = await sshd.createRepo(unique('private'), { 'compose.yaml': STACK });
    const s = await stack({ sourceType: 'git', composeFile: '' });
    await ok('compose.update', { composeId: s.composeId, customGitUrl: repo.url, customGitBranch: 'main', composePath: 'compose.yaml', customGitSSHKeyId: stored.sshKeyId });
    expect((await ok('compose.fetchSourceType', { composeId: s.composeId })).composeFile).toBe(STACK);

    const stranger = await generateTestSshKey('stranger');
    const other = await ok('sshKey.create', { name: unique('other-key'), publicKey: stranger.publicKey, privateKey: stranger.privateKey });
    await ok('compose.update', { composeId: s.composeId, customGitSSHKeyId: other.sshKeyId });
    const r = await refusal('compose.fetchSourceType', { composeId: s.composeId });
    expect(r.field).toBe('customGitUrl');
    expect(r.message).toMatch(/Permission denied \(publickey\)/);
    await ok('compose.update', { composeId: s.composeId, customGitSSHKeyId: null });
    expect((await refusal('compose.fetchSourceType', { composeId: s.composeId })).message).toMatch(/Permission denied/);
    expect(await leftovers()).toEqual([]);
  }, 60_000);

  it('gives up at its deadline on a server that never answers, killing git', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const started = Date.now();
    try {
      await expect(
        readGitFile({ url: `git://127.0.0.1:${port}/stuck.git`, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED }, 'docker-compose.yml', { timeoutMs: 1500 }),
      ).rejects.toMatchObject({ issues: [{ path: ['customGitUrl'], message: expect.stringMatching(/did not finish within 2 s/) }] });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
    expect(await leftovers()).toEqual([]);
  });

  it('refuses a repository on loopback unless the operator allows private destinations (SKIFF_OUTBOUND_ALLOW_PRIVATE)', async () => {
    const strict = await startTestPlatform({ outbound: { allowPrivate: false } });
    try {
      const repo = await git.createRepo(unique('private'), { 'docker-compose.yml': STACK });
      const project = (await strict.call('project.create', { name: 'strict' })).body;
      const created = await strict.call('compose.create', { name: 'Strict', environmentId: project.environments[0].environmentId, sourceType: 'git', composeFile: '' });
      const composeId = created.body.composeId as string;
      const url = repo.authUrl.replace('@127.0.0.1:', '@localhost:');
      expect((await strict.call('compose.update', { composeId, customGitUrl: url, customGitBranch: 'main' })).status).toBe(200);
      const refused = await strict.call('compose.fetchSourceType', { composeId });
      expect(refused.status).toBe(400);
      expect(refused.body.issues).toEqual([
        {
          path: ['customGitUrl'],
          message: "the git URL's host is refused: localhost resolves to 127.0.0.1: loopback addresses (127.0.0.0/8) are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)",
        },
      ]);
      expect((await strict.call('compose.one', { composeId })).body.composeFile).toBe('');
      // The harness's platform allows them: the same repository is read.
      const s = await stack({ sourceType: 'git', composeFile: '' });
      await ok('compose.update', { composeId: s.composeId, customGitUrl: url, customGitBranch: 'main' });
      expect(await ok('compose.fetchSourceType', { composeId: s.composeId })).toMatchObject({ composeFile: STACK });
    } finally {
      await strict.close();
    }
    expect(await leftovers()).toEqual([]);
  });

  it('refuses URLs and branches git must not be given, before running it', async () => {
    for (const [url, branch, field] of [
      ['ext::sh -c touch% /tmp/pwned', 'main', 'customGitUrl'],
      ['file:///etc', 'main', 'customGitUrl'],
      ['--upload-pack=touch /tmp/x', 'main', 'customGitUrl'],
      ['https://git.example.com/a.git', '--output=/tmp/x', 'customGitBranch'],
    ]) {
      await expect(readGitFile({ url: url!, branch: branch!, submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED }, 'x.yml')).rejects.toMatchObject({ issues: [{ path: [field] }] });
    }
  });

  it('follows the stack: a member needs it granted; another organization sees nothing', async () => {
    const s = await stack();
    const member = await addMember(t, `${unique('files')}@test.local`);
    for (const [op, extra] of [
      ['compose.getConvertedCompose', {}],
      ['compose.loadServices', {}],
      ['compose.loadMountsByService', { serviceName: 'web' }],
      ['compose.getDefaultCommand', {}],
      ['compose.fetchSourceType', {}],
      ['compose.randomizeCompose', {}],
      ['compose.isolatedDeployment', {}],
    ] as const) {
      expect((await t.as(member.key)(op, { composeId: s.composeId, ...extra })).status, op).toBe(403);
    }
    await ok('user.assignPermissions', { id: member.userId, accessedProjects: [projectId], accessedEnvironments: [env], accessedServices: [s.composeId] });
    expect((await t.as(member.key)('compose.loadServices', { composeId: s.composeId })).body).toEqual(['web', 'cache']);
    const org = await ok('organization.create', { name: unique('Elsewhere') });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: org.organizationId } })).key;
    expect((await t.as(key)('compose.getConvertedCompose', { composeId: s.composeId })).status).toBe(404);
    expect((await t.as(key)('compose.randomizeCompose', { composeId: s.composeId })).status).toBe(404);
    expect(await ok('compose.one', { composeId: s.composeId })).toMatchObject({ randomize: false, isolatedDeployment: false });
  });
});
