import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform();
  env = (await t.call('project.create', { name: 'shop' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const createApp = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('application.create', { name: 'Shop Web', environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('application records', () => {
  it('creates with a generated appName, reads it back, and lists it in its environment', async () => {
    const app = await createApp();
    expect(app.appName).toMatch(/^shop-web-[0-9a-f]{6}$/);
    expect(app).toMatchObject({ name: 'Shop Web', sourceType: 'git', applicationStatus: 'idle', replicas: 1, env: '', serverId: null });
    expect((await t.call('application.one', { applicationId: app.applicationId })).body).toEqual(app);
    const environment = await t.call('environment.one', { environmentId: env });
    expect(environment.body.services.map((s: { id: string }) => s.id)).toContain(app.applicationId);
  });

  it('keeps appName unique on a server across services, naming the field', async () => {
    await createApp({ appName: 'taken-name' });
    const res = await t.call('application.create', { name: 'x', appName: 'taken-name', environmentId: env });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['appName']);
    const other = await createApp({ appName: 'free-name' });
    const renamed = await t.call('application.update', { applicationId: other.applicationId, appName: 'taken-name' });
    expect(renamed.status).toBe(400);
    expect((await t.call('application.one', { applicationId: other.applicationId })).body.appName).toBe('free-name');
  });

  it('updates settings and Swarm values, and refuses values Swarm would not take', async () => {
    const app = await createApp();
    const res = await t.call('application.update', {
      applicationId: app.applicationId,
      replicas: 3,
      memoryLimit: '536870912',
      command: 'node server.js',
      args: ['--port', '3000'],
      healthCheckCluster: { Test: ['CMD', 'true'], Interval: 1_000_000_000 },
      modeCluster: { Replicated: { Replicas: 3 } },
      labelsCluster: { team: 'web' },
      applicationStatus: 'done',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ replicas: 3, args: ['--port', '3000'], labelsCluster: { team: 'web' }, applicationStatus: 'done' });
    expect(res.body.healthCheckCluster).toEqual({ Test: ['CMD', 'true'], Interval: 1_000_000_000 });

    for (const [field, value] of [
      ['replicas', 1.5],
      ['memoryLimit', '512m'],
      ['restartPolicyCluster', { Condition: 'sometimes' }],
      ['healthCheckCluster', { Test: ['CMD'], Intervall: 5 }],
      ['endpointSpecCluster', { Ports: [{ TargetPort: 70000 }] }],
      ['customGitUrl', 'file:///etc/passwd'],
      ['buildPath', '../../etc'],
    ] as const) {
      const bad = await t.call('application.update', { applicationId: app.applicationId, [field]: value });
      expect(bad.status, field).toBe(400);
      expect(bad.body.issues[0].path[0]).toBe(field);
    }
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.replicas).toBe(3);
    const cleared = await t.call('application.update', { applicationId: app.applicationId, healthCheckCluster: null });
    expect(cleared.body.healthCheckCluster).toBeNull();
  });

  it('keeps env encrypted at rest and secrets write-only', async () => {
    const app = await createApp();
    const saved = await t.call('application.saveEnvironment', {
      applicationId: app.applicationId,
      env: 'DB_PASSWORD=hunter2',
      buildArgs: 'NODE=20',
      buildSecrets: 'NPM_TOKEN=s3cr3t',
      createEnvFile: true,
    });
    expect(saved.body).toMatchObject({ env: 'DB_PASSWORD=hunter2', buildArgs: 'NODE=20', hasBuildSecrets: true, createEnvFile: true });
    expect(JSON.stringify(saved.body)).not.toContain('s3cr3t');
    const container = await t.call('application.saveContainerProvider', {
      applicationId: app.applicationId,
      containerImage: 'registry.example.com/shop:1',
      username: 'ci',
      password: 'registry-pass',
      registryUrl: 'registry.example.com',
    });
    expect(container.body).toMatchObject({ sourceType: 'container', containerImage: 'registry.example.com/shop:1', hasPassword: true });
    expect(JSON.stringify(container.body)).not.toContain('registry-pass');
    const row = await t.db.selectFrom('applications').selectAll().where('id', '=', app.applicationId).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    for (const secret of ['hunter2', 's3cr3t', 'registry-pass']) expect(stored).not.toContain(secret);
  });

  it('takes env null as no env text, for every kind of service', async () => {
    const app = await createApp();
    await t.call('application.update', { applicationId: app.applicationId, env: 'A=1' });
    const cleared = await t.call('application.update', { applicationId: app.applicationId, env: null });
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);
    expect(cleared.body.env).toBe('');
    const stack = (await t.call('compose.create', { name: 'c', environmentId: env })).body;
    const cache = (await t.call('cache.create', { name: 'r', environmentId: env, databasePassword: 'pw' })).body;
    expect((await t.call('compose.update', { composeId: stack.composeId, env: null })).body.env).toBe('');
    expect((await t.call('cache.update', { cacheId: cache.cacheId, env: null })).body.env).toBe('');
  });

  it('saves sources and build types, and disconnects back to a plain git source', async () => {
    const app = await createApp();
    const git = await t.call('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: 'https://git.example.com/shop.git',
      customGitBranch: 'main',
      customGitBuildPath: '/',
      watchPaths: ['src/**'],
    });
    expect(git.body).toMatchObject({ sourceType: 'git', customGitUrl: 'https://git.example.com/shop.git', watchPaths: ['src/**'] });
    const build = await t.call('application.saveBuildType', {
      applicationId: app.applicationId,
      buildType: 'containerfile',
      containerfile: 'Containerfile',
      containerContextPath: '.',
      containerBuildStage: null,
      legacyVersion: null,
      packTwoVersion: null,
    });
    expect(build.body).toMatchObject({ buildType: 'containerfile', containerfile: 'Containerfile' });
    const missingKey = await t.call('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: 'git@git.example.com:shop.git',
      customGitBranch: 'main',
      customGitBuildPath: null,
      watchPaths: null,
      customGitSSHKeyId: 'key_missing',
    });
    expect(missingKey.status).toBe(400);
    expect(missingKey.body.issues[0].path).toEqual(['customGitSSHKeyId']);
    const forge = await t.call('application.saveForgeAProvider', {
      applicationId: app.applicationId, repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: 'fga_missing', branch: 'main',
    });
    expect(forge.status).toBe(400);
    expect(forge.body.issues[0].path).toEqual(['forgeAId']);
    const off = await t.call('application.disconnectGitProvider', { applicationId: app.applicationId });
    expect(off.body).toMatchObject({ sourceType: 'git', customGitUrl: null, watchPaths: null, buildType: 'containerfile' });
  });

  it('refuses git URLs and branches the agent would not clone, naming the field', async () => {
    const app = await createApp();
    const save = (customGitUrl: string, customGitBranch: string) =>
      t.call('application.saveGitProvider', { applicationId: app.applicationId, customGitUrl, customGitBranch, customGitBuildPath: '/', watchPaths: null });
    const ok = await save('git@git.example.com:acme/shop.git', 'release/2.1');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    for (const [url, branch, field, message] of [
      ['http://169.254.169.254/latest/meta-data', 'main', 'customGitUrl', /link-local/],
      ['ssh://git@[fe80::1]/shop.git', 'main', 'customGitUrl', /link-local/],
      ['git@2852039166:shop.git', 'main', 'customGitUrl', /link-local/],
      ['https://metadata.google.internal/shop.git', 'main', 'customGitUrl', /cloud metadata/],
      ['ext::sh -c id', 'main', 'customGitUrl', /remote helper|whitespace/],
      ['--upload-pack=id', 'main', 'customGitUrl', /must not start with "-"/],
      ['https://git.example.com/shop.git', '--orphan', 'customGitBranch', /must not start with "-"/],
      ['https://git.example.com/shop.git', 'main..other', 'customGitBranch', /not a valid branch name/],
    ] as const) {
      const bad = await save(url, branch);
      expect(bad.status, url).toBe(400);
      expect(bad.body.code).toBe('BAD_REQUEST');
      expect(bad.body.issues[0].path, url).toEqual([field]);
      expect(bad.body.issues[0].message, url).toMatch(message);
    }
    expect((await t.call('application.one', { applicationId: app.applicationId })).body).toMatchObject({
      customGitUrl: 'git@git.example.com:acme/shop.git',
      customGitBranch: 'release/2.1',
    });
  });

  it('marks running and deletes the record', async () => {
    const app = await createApp();
    expect((await t.call('application.markRunning', { applicationId: app.applicationId })).status).toBe(200);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('running');
    const deleted = await t.call('application.delete', { applicationId: app.applicationId });
    expect(deleted.body.applicationId).toBe(app.applicationId);
    expect((await t.call('application.one', { applicationId: app.applicationId })).status).toBe(404);
  });

  it('is copied whole by environment.duplicate, with a fresh appName and no webhook token', async () => {
    const p = (await t.call('project.create', { name: 'copied' })).body;
    const source = p.environments[0].environmentId;
    const app = (await t.call('application.create', { name: 'api', environmentId: source })).body;
    await t.call('application.update', {
      applicationId: app.applicationId,
      watchPaths: ['src/**'],
      labelsCluster: { tier: 'api' },
      env: 'TOKEN=abc',
      refreshToken: 'hook-token',
      password: 'pw',
    });
    const copy = await t.call('environment.duplicate', { environmentId: source, name: 'staging' });
    expect(copy.status, JSON.stringify(copy.body)).toBe(200);
    const copied = (await t.call('application.one', { applicationId: copy.body.services[0].id })).body;
    expect(copied).toMatchObject({ name: 'api', watchPaths: ['src/**'], labelsCluster: { tier: 'api' }, env: 'TOKEN=abc', hasPassword: true, refreshToken: null });
    expect(copied.appName).not.toBe(app.appName);
  });

  it('goes with its project, with its domains and backups, and the answer counts them', async () => {
    const p = (await t.call('project.create', { name: 'doomed' })).body;
    const envId = p.environments[0].environmentId;
    const app = (await t.call('application.create', { name: 'web', environmentId: envId })).body;
    const stack = (await t.call('compose.create', { name: 'stack', environmentId: envId })).body;
    await t.call('domain.create', { host: 'doomed.example.com', applicationId: app.applicationId, port: 3000 });
    await t.call('domain.create', { host: 'stats.doomed.example.com', composeId: stack.composeId, serviceName: 'web', port: 80 });
    const destination = (
      await t.call('destination.create', { name: 's3', endpoint: 'https://s3.example.com', region: 'eu', bucket: 'doomed-backups', accessKey: 'a', secretKey: 'b' })
    ).body;
    const backup = await t.call('backup.create', {
      schedule: '0 3 * * *', prefix: 'db', destinationId: destination.destinationId, database: 'app',
      databaseType: 'dbA', dbAId: (await t.call('dbA.create', { name: 'pg', environmentId: envId })).body.dbAId,
    });
    expect(backup.status, JSON.stringify(backup.body)).toBe(200);
    const removed = await t.call('project.remove', { projectId: p.projectId });
    expect(removed.body.removed).toEqual({ environments: 1, applications: 1, compose: 1, caches: 0, databases: 1, domains: 2, backups: 1, archives: 0 });
    const left = await t.db.selectFrom('domains').select('id').where('host', 'like', '%doomed.example.com').execute();
    expect(left).toEqual([]);
    expect((await t.call('backup.one', { backupId: backup.body.backupId })).status).toBe(404);
  });

  it('refuses an environment or server that does not exist', async () => {
    const noEnv = await t.call('application.create', { name: 'x', environmentId: 'env_missing' });
    expect(noEnv.status).toBe(404);
    const noServer = await t.call('application.create', { name: 'x', environmentId: env, serverId: 'srv_missing' });
    expect(noServer.status).toBe(400);
    expect(noServer.body.issues[0].path).toEqual(['serverId']);
  });
});

describe('application permissions', () => {
  it('lets a member act only with the grants and services given', async () => {
    const member = await addMember(t, 'dev@example.com');
    const m = t.as(member.key);
    const app = await createApp();
    const project = (await t.call('project.all')).body[0];
    expect((await m('application.one', { applicationId: app.applicationId })).status).toBe(403);
    expect((await m('application.create', { name: 'x', environmentId: env })).status).toBe(403);

    await t.call('user.assignPermissions', {
      id: member.userId,
      accessedProjects: [project.projectId],
      accessedEnvironments: [env],
      accessedServices: [app.applicationId],
      canCreateServices: true,
    });
    expect((await m('application.one', { applicationId: app.applicationId })).status).toBe(200);
    expect((await m('application.update', { applicationId: app.applicationId, replicas: 2 })).status).toBe(200);
    const own = await m('application.create', { name: 'mine', environmentId: env });
    expect(own.status).toBe(200);
    expect((await m('application.one', { applicationId: own.body.applicationId })).status).toBe(200);
    expect((await m('application.delete', { applicationId: own.body.applicationId })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, canDeleteServices: true });
    expect((await m('application.delete', { applicationId: own.body.applicationId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, for reads and writes', async () => {
    const app = await createApp();
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    expect((await outsider('application.one', { applicationId: app.applicationId })).status).toBe(404);
    expect((await outsider('application.update', { applicationId: app.applicationId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('application.delete', { applicationId: app.applicationId })).status).toBe(404);
    expect((await outsider('application.create', { name: 'x', environmentId: env })).status).toBe(404);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.name).toBe('Shop Web');
  });
});
