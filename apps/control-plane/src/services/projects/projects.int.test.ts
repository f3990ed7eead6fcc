import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

const count = async (table: 'projects' | 'environments' | 'applications' | 'composeStacks' | 'cacheInstances') =>
  Number((await t.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** Services have no create operation yet (their issue comes next); tests put rows in directly. */
async function addService(environmentId: string, kind: 'application' | 'compose' | 'cache', name: string) {
  const id = `${kind}_${name}`;
  const common = { id, environmentId, name, appName: `${name}-abc123`, description: null, serverId: null, env: t.platform.secrets.seal(`SERVICE=${name}`) };
  if (kind === 'application') await t.db.insertInto('applications').values({ ...common, sourceType: 'git' }).execute();
  if (kind === 'compose')
    await t.db.insertInto('composeStacks').values({ ...common, sourceType: 'raw', composeType: 'container-compose', composeFile: 'services: {}' }).execute();
  if (kind === 'cache')
    await t.db.insertInto('cacheInstances').values({ ...common, containerImage: 'redis:8', databasePassword: 'sealed' }).execute();
  return id;
}

describe('projects', () => {
  it('creates a project with a production environment, lists and reads it', async () => {
    const created = await t.call('project.create', { name: 'shop', description: 'web shop', env: 'REGION=eu\nTIER=1' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ name: 'shop', description: 'web shop', env: 'REGION=eu\nTIER=1' });
    expect(created.body.environments).toMatchObject([{ name: 'production', env: '', services: [] }]);
    const all = await t.call('project.all');
    expect(all.body.map((p: { projectId: string }) => p.projectId)).toContain(created.body.projectId);
    const one = await t.call('project.one', { projectId: created.body.projectId });
    expect(one.body).toEqual(created.body);
  });

  it('keeps env text encrypted at rest', async () => {
    const created = await t.call('project.create', { name: 'secretive', env: 'DB_PASSWORD=hunter2' });
    const row = await t.db.selectFrom('projects').select('env').where('id', '=', created.body.projectId).executeTakeFirstOrThrow();
    expect(row.env).not.toContain('hunter2');
    expect(row.env).toMatch(/^v1:/);
  });

  it('updates name, description and env, and ignores createdAt', async () => {
    const p = (await t.call('project.create', { name: 'before' })).body;
    const res = await t.call('project.update', { projectId: p.projectId, name: 'after', description: null, env: 'A=2', createdAt: '2000-01-01T00:00:00Z' });
    expect(res.body).toMatchObject({ name: 'after', description: null, env: 'A=2', createdAt: p.createdAt });
  });

  it('refuses moving a project to another organization, changing nothing', async () => {
    const p = (await t.call('project.create', { name: 'stay' })).body;
    const res = await t.call('project.update', { projectId: p.projectId, name: 'moved', organizationId: 'org_other' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['organizationId']);
    expect((await t.call('project.one', { projectId: p.projectId })).body.name).toBe('stay');
  });

  it('removes a project with its environments and services, and says what was removed', async () => {
    const p = (await t.call('project.create', { name: 'doomed' })).body;
    const env = p.environments[0].environmentId;
    await t.call('environment.create', { projectId: p.projectId, name: 'staging' });
    await addService(env, 'application', 'doomed-web');
    await addService(env, 'cache', 'doomed-cache');
    const res = await t.call('project.remove', { projectId: p.projectId });
    expect(res.body.removed).toEqual({ environments: 2, applications: 1, compose: 0, caches: 1, databases: 0, domains: 0, backups: 0, archives: 0 });
    // Neither was deployed: nothing of theirs is on a server.
    expect(res.body.kept).toEqual([]);
    expect((await t.call('project.one', { projectId: p.projectId })).status).toBe(404);
    const left = await t.db.selectFrom('applications').select('id').where('environmentId', '=', env).execute();
    expect(left).toEqual([]);
  });

  it('changes nothing on bad input', async () => {
    const before = await count('projects');
    expect((await t.call('project.create', { name: '' })).status).toBe(400);
    expect((await t.call('project.create', { name: 'x', description: 42 })).status).toBe(400);
    expect(await count('projects')).toBe(before);
  });
});

describe('environments', () => {
  it('creates, reads, lists, updates and removes environments', async () => {
    const p = (await t.call('project.create', { name: 'envs' })).body;
    const env = await t.call('environment.create', { projectId: p.projectId, name: 'staging', description: 'pre' });
    expect(env.body).toMatchObject({ name: 'staging', description: 'pre', projectId: p.projectId, env: '' });
    const id = env.body.environmentId;
    expect((await t.call('environment.one', { environmentId: id })).body).toMatchObject({ name: 'staging', services: [] });
    const list = await t.call('environment.byProjectId', { projectId: p.projectId });
    expect(list.body.map((e: { name: string }) => e.name)).toEqual(['production', 'staging']);
    const updated = await t.call('environment.update', { environmentId: id, name: 'qa', env: 'DEBUG=1' });
    expect(updated.body).toMatchObject({ name: 'qa', env: 'DEBUG=1' });
    const removed = await t.call('environment.remove', { environmentId: id });
    expect(removed.body.removed).toEqual({ environments: 1, applications: 0, compose: 0, caches: 0, databases: 0, domains: 0, backups: 0, archives: 0 });
    expect((await t.call('environment.one', { environmentId: id })).status).toBe(404);
  });

  it('keeps names unique within a project', async () => {
    const p = (await t.call('project.create', { name: 'uniq' })).body;
    const dup = await t.call('environment.create', { projectId: p.projectId, name: 'production' });
    expect(dup.status).toBe(400);
    expect(dup.body.issues[0].path).toEqual(['name']);
    const staging = await t.call('environment.create', { projectId: p.projectId, name: 'staging' });
    const rename = await t.call('environment.update', { environmentId: staging.body.environmentId, name: 'production' });
    expect(rename.status).toBe(400);
  });

  it('answers a name too long for its unique index as BAD_REQUEST naming it, changing nothing (found by tools/fuzz)', async () => {
    const p = (await t.call('project.create', { name: 'long-names' })).body;
    const long = randomBytes(15_000).toString('base64');
    for (const name of [long, 'a'.repeat(1024 * 1024)]) {
      const created = await t.call('environment.create', { projectId: p.projectId, name });
      expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBe(400);
      expect(created.body.issues[0].path).toEqual(['name']);
      const renamed = await t.call('environment.update', { environmentId: p.environments[0].environmentId, name });
      expect(renamed.status, JSON.stringify(renamed.body).slice(0, 300)).toBe(400);
      expect(renamed.body.issues[0].path).toEqual(['name']);
    }
    expect((await t.call('environment.one', { environmentId: p.environments[0].environmentId })).body.name).toBe('production');
    expect((await t.call('project.one', { projectId: p.projectId })).body.environments).toHaveLength(1);
  });

  it("refuses removing a project's last environment", async () => {
    const p = (await t.call('project.create', { name: 'last' })).body;
    const res = await t.call('environment.remove', { environmentId: p.environments[0].environmentId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['environmentId']);
  });

  it('moves an environment to another project of the organization', async () => {
    const a = (await t.call('project.create', { name: 'a' })).body;
    const b = (await t.call('project.create', { name: 'b' })).body;
    const env = (await t.call('environment.create', { projectId: a.projectId, name: 'moving' })).body;
    const moved = await t.call('environment.update', { environmentId: env.environmentId, projectId: b.projectId });
    expect(moved.body.projectId).toBe(b.projectId);
    const bad = await t.call('environment.update', { environmentId: env.environmentId, projectId: 'prj_none' });
    expect(bad.status).toBe(400);
  });

  it('duplicates an environment with its env text and services, under fresh names', async () => {
    const p = (await t.call('project.create', { name: 'dupenv' })).body;
    const src = p.environments[0].environmentId;
    await t.call('environment.update', { environmentId: src, env: 'X=1' });
    await addService(src, 'application', 'dupenv-web');
    await addService(src, 'compose', 'dupenv-stack');
    const copy = await t.call('environment.duplicate', { environmentId: src, name: 'copy' });
    expect(copy.status).toBe(200);
    expect(copy.body).toMatchObject({ name: 'copy', env: 'X=1', projectId: p.projectId });
    expect(copy.body.services.map((s: { type: string }) => s.type).sort()).toEqual(['application', 'compose']);
    for (const s of copy.body.services) {
      expect(s.appName).toMatch(/^dupenv-(web|stack)-[0-9a-f]{6}$/);
      expect(s.appName).not.toMatch(/abc123/);
      expect(s.applicationStatus).toBe('idle');
    }
  });
});

describe('project.duplicate', () => {
  let source: { projectId: string; env: string; app: string; cache: string };
  beforeAll(async () => {
    const p = (await t.call('project.create', { name: 'origin', env: 'P=1' })).body;
    const env = p.environments[0].environmentId;
    source = {
      projectId: p.projectId,
      env,
      app: await addService(env, 'application', 'origin-web'),
      cache: await addService(env, 'cache', 'origin-cache'),
    };
  });

  it('copies into a new project by default, with every service', async () => {
    const res = await t.call('project.duplicate', { sourceEnvironmentId: source.env, name: 'origin-copy' });
    expect(res.status).toBe(200);
    expect(res.body.projectId).not.toBe(source.projectId);
    expect(res.body).toMatchObject({ name: 'origin-copy', env: 'P=1' });
    expect(res.body.environments).toHaveLength(1);
    expect(res.body.environments[0].name).toBe('production');
    expect(res.body.environments[0].services).toHaveLength(2);
  });

  it('copies only the selected services', async () => {
    const res = await t.call('project.duplicate', {
      sourceEnvironmentId: source.env,
      name: 'only-cache',
      selectedServices: [{ id: source.cache, type: 'cache' }],
    });
    expect(res.body.environments[0].services.map((s: { type: string }) => s.type)).toEqual(['cache']);
  });

  it('copies no service with includeServices false', async () => {
    const res = await t.call('project.duplicate', { sourceEnvironmentId: source.env, name: 'empty', includeServices: false });
    expect(res.body.environments[0].services).toEqual([]);
  });

  it('adds an environment to the same project with duplicateInSameProject', async () => {
    const res = await t.call('project.duplicate', { sourceEnvironmentId: source.env, name: 'sibling', duplicateInSameProject: true });
    expect(res.body.projectId).toBe(source.projectId);
    expect(res.body.environments.map((e: { name: string }) => e.name)).toEqual(['production', 'sibling']);
  });

  it('refuses selected services from elsewhere, and an empty name, changing nothing', async () => {
    const before = await count('projects');
    const bad = await t.call('project.duplicate', {
      sourceEnvironmentId: source.env,
      name: 'bad',
      selectedServices: [{ id: 'application_elsewhere', type: 'application' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toEqual(['selectedServices']);
    const empty = await t.call('project.duplicate', { sourceEnvironmentId: source.env, name: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toEqual(['name']);
    expect(await count('projects')).toBe(before);
  });
});
