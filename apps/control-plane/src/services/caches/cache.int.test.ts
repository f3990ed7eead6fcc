import { contractsByName } from '@skiff/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { addMember, otherOrganization, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

/** The documented record, refusing any field it does not document. */
const CacheRecord = (contractsByName.get('cache.one')!.output as z.ZodObject).strict();

let t: TestPlatform;
let env: string;
let projectId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'caches' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const PASSWORD = 'correct-horse-battery-staple';

const createCache = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('cache.create', { name: 'Session Store', databasePassword: PASSWORD, environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('cache records', () => {
  it('creates with redis:8 and a generated appName, reads it back, and lists it in its environment', async () => {
    const cache = await createCache();
    expect(cache.appName).toMatch(/^session-store-[0-9a-f]{6}$/);
    expect(cache).toMatchObject({
      name: 'Session Store',
      containerImage: 'redis:8',
      hasDatabasePassword: true,
      applicationStatus: 'idle',
      replicas: 1,
      env: '',
      externalPort: null,
      serverId: null,
    });
    expect(CacheRecord.safeParse(cache).success).toBe(true);
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body).toEqual(cache);
    const environment = await t.call('environment.one', { environmentId: env });
    const listed = environment.body.services.find((s: { id: string }) => s.id === cache.cacheId);
    expect(listed).toMatchObject({ type: 'cache', appName: cache.appName });
  });

  it('keeps the password write-only and encrypted at rest, with env', async () => {
    const cache = await createCache({ containerImage: 'redis:7.4-alpine' });
    expect(JSON.stringify(cache)).not.toContain(PASSWORD);
    const created = await t.db.selectFrom('cacheInstances').selectAll().where('id', '=', cache.cacheId).executeTakeFirstOrThrow();
    expect(JSON.stringify(created)).not.toContain(PASSWORD);
    expect(t.platform.secrets.open(created.databasePassword)).toBe(PASSWORD);
    const updated = await t.call('cache.update', { cacheId: cache.cacheId, databasePassword: 'rotated-secret-42' });
    expect(updated.body.hasDatabasePassword).toBe(true);
    expect(JSON.stringify(updated.body)).not.toContain('rotated-secret-42');
    const saved = await t.call('cache.saveEnvironment', { cacheId: cache.cacheId, env: 'REDIS_ARGS=--requirepass envsecret' });
    expect(saved.body.env).toBe('REDIS_ARGS=--requirepass envsecret');
    const row = await t.db.selectFrom('cacheInstances').selectAll().where('id', '=', cache.cacheId).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    for (const secret of [PASSWORD, 'rotated-secret-42', 'envsecret']) expect(stored).not.toContain(secret);
    expect(t.platform.secrets.open(row.databasePassword)).toBe('rotated-secret-42');
    const cleared = await t.call('cache.saveEnvironment', { cacheId: cache.cacheId, env: null });
    expect(cleared.body.env).toBe('');
  });

  it('requires a password and an image reference', async () => {
    for (const [field, value] of [
      ['databasePassword', ''],
      ['databasePassword', 'multi\nline'],
      ['containerImage', 'redis:8; rm -rf /'],
      ['containerImage', 'Redis'],
    ] as const) {
      const res = await t.call('cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: env, [field]: value });
      expect(res.status, `${field}=${value}`).toBe(400);
      expect(res.body.issues[0].path).toEqual([field]);
    }
    const missing = await t.call('cache.create', { name: 'x', environmentId: env });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].path).toEqual(['databasePassword']);
  });

  it('keeps appName unique on a server across every kind of service, naming the field', async () => {
    await t.call('compose.create', { name: 'c', appName: 'stack-owned', environmentId: env });
    const clash = await t.call('cache.create', { name: 'x', appName: 'stack-owned', databasePassword: PASSWORD, environmentId: env });
    expect(clash.status).toBe(400);
    expect(clash.body.issues[0].path).toEqual(['appName']);
    await t.call('application.create', { name: 'a', appName: 'app-owned', environmentId: env });
    const cache = await createCache({ appName: 'cache-owned' });
    const renamed = await t.call('cache.update', { cacheId: cache.cacheId, appName: 'app-owned' });
    expect(renamed.status).toBe(400);
    expect(renamed.body.issues[0].path).toEqual(['appName']);
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body.appName).toBe('cache-owned');
  });

  it('updates every kind of field, including Swarm values, and refuses bad values changing nothing', async () => {
    const cache = await createCache();
    const res = await t.call('cache.update', {
      cacheId: cache.cacheId,
      name: 'Sessions',
      description: 'user sessions',
      containerImage: 'registry.example.com:5000/cache/redis:8.2',
      command: 'redis-server',
      args: ['--appendonly', 'yes'],
      env: 'A=1',
      memoryReservation: '134217728',
      memoryLimit: '268435456',
      cpuReservation: '250000000',
      cpuLimit: '1000000000',
      externalPort: 16379,
      applicationStatus: 'running',
      replicas: 2,
      networkIds: ['backend', 'metrics_net'],
      detachPlatformNetwork: true,
      createdAt: '2000-01-01T00:00:00.000Z',
      restartPolicyCluster: { Condition: 'any', Delay: 5_000_000_000 },
      ulimitsCluster: [{ Name: 'nofile', Soft: 65536, Hard: 65536 }],
      modeCluster: { Replicated: { Replicas: 2 } },
      labelsCluster: { tier: 'cache' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Sessions',
      description: 'user sessions',
      containerImage: 'registry.example.com:5000/cache/redis:8.2',
      args: ['--appendonly', 'yes'],
      memoryLimit: '268435456',
      externalPort: 16379,
      applicationStatus: 'running',
      replicas: 2,
      networkIds: ['backend', 'metrics_net'],
      detachPlatformNetwork: true,
      restartPolicyCluster: { Condition: 'any', Delay: 5_000_000_000 },
      ulimitsCluster: [{ Name: 'nofile', Soft: 65536, Hard: 65536 }],
      labelsCluster: { tier: 'cache' },
      createdAt: cache.createdAt,
    });
    expect(CacheRecord.safeParse(res.body).success).toBe(true);

    for (const [field, value] of [
      ['replicas', 1.5],
      ['replicas', -1],
      ['externalPort', 0],
      ['externalPort', 65536],
      ['externalPort', 80.5],
      ['memoryLimit', '512m'],
      ['cpuLimit', '0.5'],
      ['networkIds', ['ok', 'bad name']],
      ['containerImage', 'redis:8 --privileged'],
      ['databasePassword', ''],
      ['restartPolicyCluster', { Condition: 'sometimes' }],
      ['healthCheckCluster', { Test: ['CMD'], Intervall: 5 }],
      ['endpointSpecCluster', { Ports: [{ TargetPort: 70000 }] }],
      ['applicationStatus', 'sleeping'],
      ['environmentId', 'env_missing'],
    ] as const) {
      const bad = await t.call('cache.update', { cacheId: cache.cacheId, name: 'changed', [field]: value });
      expect(bad.status, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(bad.body.issues[0].path[0]).toBe(field);
    }
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body).toEqual(res.body);
    const cleared = await t.call('cache.update', { cacheId: cache.cacheId, restartPolicyCluster: null, args: null });
    expect(cleared.body).toMatchObject({ restartPolicyCluster: null, args: null });
  });

  it('publishes a host port once per server, and null stops publishing', async () => {
    const a = await createCache();
    const b = await createCache();
    const saved = await t.call('cache.saveExternalPort', { cacheId: a.cacheId, externalPort: 6390 });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.externalPort).toBe(6390);
    // Saving the same port again on the same instance is fine.
    expect((await t.call('cache.saveExternalPort', { cacheId: a.cacheId, externalPort: 6390 })).status).toBe(200);
    for (const [op, input] of [
      ['cache.saveExternalPort', { cacheId: b.cacheId, externalPort: 6390 }],
      ['cache.update', { cacheId: b.cacheId, externalPort: 6390 }],
    ] as const) {
      const taken = await t.call(op, input);
      expect(taken.status, op).toBe(400);
      expect(taken.body.issues[0].path).toEqual(['externalPort']);
    }
    expect((await t.call('cache.saveExternalPort', { cacheId: b.cacheId, externalPort: 70000 })).status).toBe(400);
    // The same port on another server is free.
    await t.db.insertInto('servers').values({ id: 'srv_cch', organizationId: t.organizationId, name: 'edge', address: '10.0.0.7', description: null }).execute();
    const remote = await createCache({ serverId: 'srv_cch' });
    expect((await t.call('cache.saveExternalPort', { cacheId: remote.cacheId, externalPort: 6390 })).status).toBe(200);
    // The database refuses a second publisher even when the check is bypassed.
    await expect(
      t.db.updateTable('cacheInstances').set({ externalPort: 6390 }).where('id', '=', b.cacheId).execute(),
    ).rejects.toMatchObject({ code: '23505' });

    const off = await t.call('cache.saveExternalPort', { cacheId: a.cacheId, externalPort: null });
    expect(off.body.externalPort).toBeNull();
    expect((await t.call('cache.saveExternalPort', { cacheId: b.cacheId, externalPort: 6390 })).body.externalPort).toBe(6390);
  });

  it('changes status', async () => {
    const cache = await createCache();
    const res = await t.call('cache.changeStatus', { cacheId: cache.cacheId, applicationStatus: 'error' });
    expect(res.status).toBe(200);
    expect(res.body.applicationStatus).toBe('error');
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body.applicationStatus).toBe('error');
    expect((await t.call('cache.changeStatus', { cacheId: cache.cacheId, applicationStatus: 'asleep' })).status).toBe(400);
  });

  it('moves between environments with cache.move or update.environmentId, refusing another organization’s', async () => {
    const cache = await createCache();
    const staging = (await t.call('environment.create', { projectId, name: 'staging-cch' })).body.environmentId;
    const other = (await t.call('project.create', { name: 'other-cch' })).body.environments[0].environmentId;
    const moved = await t.call('cache.move', { cacheId: cache.cacheId, targetEnvironmentId: staging });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ cacheId: cache.cacheId, environmentId: staging, appName: cache.appName, hasDatabasePassword: true });
    const viaUpdate = await t.call('cache.update', { cacheId: cache.cacheId, environmentId: other, name: 'moved' });
    expect(viaUpdate.body).toMatchObject({ environmentId: other, name: 'moved' });

    const outsider = await otherOrganization(t);
    const foreignEnv = (await outsider('project.create', { name: 'theirs' })).body.environments[0].environmentId;
    const refused = await t.call('cache.move', { cacheId: cache.cacheId, targetEnvironmentId: foreignEnv });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['targetEnvironmentId']);
    const refusedUpdate = await t.call('cache.update', { cacheId: cache.cacheId, environmentId: foreignEnv });
    expect(refusedUpdate.status).toBe(400);
    expect(refusedUpdate.body.issues[0].path).toEqual(['environmentId']);
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body.environmentId).toBe(other);
  });

  it('removes the record', async () => {
    const cache = await createCache();
    const removed = await t.call('cache.remove', { cacheId: cache.cacheId });
    expect(removed.status).toBe(200);
    expect(removed.body.cacheId).toBe(cache.cacheId);
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).status).toBe(404);
    expect((await t.call('cache.remove', { cacheId: cache.cacheId })).status).toBe(404);
  });

  it('is removed with its project, which says so', async () => {
    const project = (await t.call('project.create', { name: 'doomed-cch' })).body;
    const e = project.environments[0].environmentId;
    const c = (await t.call('cache.create', { name: 'c', databasePassword: PASSWORD, environmentId: e })).body;
    await t.call('compose.create', { name: 's', environmentId: e });
    const removed = await t.call('project.remove', { projectId: project.projectId });
    expect(removed.status).toBe(200);
    expect(removed.body.removed).toMatchObject({ environments: 1, caches: 1, compose: 1 });
    expect((await t.call('cache.one', { cacheId: c.cacheId })).status).toBe(404);
  });

  it('refuses an environment or server that does not exist', async () => {
    expect((await t.call('cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: 'env_missing' })).status).toBe(404);
    const noServer = await t.call('cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: env, serverId: 'srv_missing' });
    expect(noServer.status).toBe(400);
    expect(noServer.body.issues[0].path).toEqual(['serverId']);
  });
});

describe('cache permissions', () => {
  it('lets an admin do everything', async () => {
    const admin = await addMember(t, 'admin-cch@example.com', 'admin');
    const a = t.as(admin.key);
    const made = await a('cache.create', { name: 'admin cache', databasePassword: PASSWORD, environmentId: env });
    expect(made.status).toBe(200);
    const owners = await createCache();
    expect((await a('cache.update', { cacheId: owners.cacheId, name: 'by admin' })).status).toBe(200);
    expect((await a('cache.remove', { cacheId: made.body.cacheId })).status).toBe(200);
  });

  it('lets a member act only with the grants and services given', async () => {
    const member = await addMember(t, 'dev-cch@example.com');
    const m = t.as(member.key);
    const cache = await createCache();
    const staging = (await t.call('environment.create', { projectId, name: 'staging-cch-perm' })).body.environmentId;
    for (const [op, input] of [
      ['cache.one', { cacheId: cache.cacheId }],
      ['cache.update', { cacheId: cache.cacheId, name: 'nope' }],
      ['cache.saveEnvironment', { cacheId: cache.cacheId, env: 'X=1' }],
      ['cache.saveExternalPort', { cacheId: cache.cacheId, externalPort: 6400 }],
      ['cache.changeStatus', { cacheId: cache.cacheId, applicationStatus: 'done' }],
      ['cache.move', { cacheId: cache.cacheId, targetEnvironmentId: env }],
      ['cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: env }],
      ['cache.remove', { cacheId: cache.cacheId }],
    ] as const) {
      expect((await m(op, input)).status, op).toBe(403);
    }

    await t.call('user.assignPermissions', {
      id: member.userId,
      accessedProjects: [projectId],
      accessedEnvironments: [env],
      accessedServices: [cache.cacheId],
    });
    expect((await m('cache.one', { cacheId: cache.cacheId })).body.hasDatabasePassword).toBe(true);
    expect((await m('cache.update', { cacheId: cache.cacheId, name: 'by member' })).status).toBe(200);
    expect((await m('cache.changeStatus', { cacheId: cache.cacheId, applicationStatus: 'done' })).status).toBe(200);
    expect((await m('cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: env })).status).toBe(403);
    expect((await m('cache.move', { cacheId: cache.cacheId, targetEnvironmentId: staging })).status).toBe(403);
    expect((await m('cache.update', { cacheId: cache.cacheId, environmentId: staging })).status).toBe(403);
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body.environmentId).toBe(env);

    await t.call('user.assignPermissions', { id: member.userId, canCreateServices: true, accessedEnvironments: [env, staging] });
    expect((await m('cache.move', { cacheId: cache.cacheId, targetEnvironmentId: staging })).status).toBe(200);
    const own = await m('cache.create', { name: 'mine', databasePassword: PASSWORD, environmentId: env });
    expect(own.status).toBe(200);
    expect((await m('cache.one', { cacheId: own.body.cacheId })).status).toBe(200);
    expect((await m('cache.remove', { cacheId: own.body.cacheId })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, canDeleteServices: true });
    expect((await m('cache.remove', { cacheId: own.body.cacheId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, for reads and writes', async () => {
    const cache = await createCache();
    const outsider = await otherOrganization(t);
    const theirEnv = (await outsider('project.create', { name: 'theirs' })).body.environments[0].environmentId;
    for (const [op, input] of [
      ['cache.one', { cacheId: cache.cacheId }],
      ['cache.update', { cacheId: cache.cacheId, name: 'stolen' }],
      ['cache.update', { cacheId: cache.cacheId, environmentId: theirEnv }],
      ['cache.saveEnvironment', { cacheId: cache.cacheId, env: 'X=1' }],
      ['cache.saveExternalPort', { cacheId: cache.cacheId, externalPort: 6401 }],
      ['cache.changeStatus', { cacheId: cache.cacheId, applicationStatus: 'done' }],
      ['cache.move', { cacheId: cache.cacheId, targetEnvironmentId: theirEnv }],
      ['cache.remove', { cacheId: cache.cacheId }],
      ['cache.create', { name: 'x', databasePassword: PASSWORD, environmentId: env }],
    ] as const) {
      expect((await outsider(op, input)).status, op).toBe(404);
    }
    expect((await t.call('cache.one', { cacheId: cache.cacheId })).body).toEqual(cache);
  });
});
