import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
let member: { userId: string; key: string };
let project: { projectId: string; environments: { environmentId: string }[] };

beforeAll(async () => {
  t = await startTestPlatform();
  member = await addMember(t, 'member@example.com');
  project = (await t.call('project.create', { name: 'guarded' })).body;
});
afterAll(() => t?.close());

const grant = (perms: Record<string, unknown>) => t.call('user.assignPermissions', { id: member.userId, ...perms });

describe('a member without grants', () => {
  it('sees no project and cannot read one of the organization (FORBIDDEN)', async () => {
    const m = t.as(member.key);
    expect((await m('project.all')).body).toEqual([]);
    const res = await m('project.one', { projectId: project.projectId });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it('cannot create projects or administer the organization', async () => {
    const m = t.as(member.key);
    expect((await m('project.create', { name: 'mine' })).status).toBe(403);
    expect((await m('user.all')).status).toBe(403);
    expect((await m('organization.inviteMember', { email: 'x@example.com' })).status).toBe(403);
    expect((await m('user.assignPermissions', { id: member.userId, canCreateProjects: true })).status).toBe(403);
    const count = await t.db.selectFrom('projects').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
});

describe('a member with grants', () => {
  it('reads the projects and environments granted, and only those', async () => {
    const env = project.environments[0]!.environmentId;
    await grant({ accessedProjects: [project.projectId], accessedEnvironments: [env] });
    const m = t.as(member.key);
    const one = await m('project.one', { projectId: project.projectId });
    expect(one.status).toBe(200);
    expect(one.body.environments.map((e: { environmentId: string }) => e.environmentId)).toEqual([env]);

    const hidden = await t.call('environment.create', { projectId: project.projectId, name: 'hidden' });
    expect((await m('environment.one', { environmentId: hidden.body.environmentId })).status).toBe(403);
    const listed = await m('environment.byProjectId', { projectId: project.projectId });
    expect(listed.body.map((e: { name: string }) => e.name)).toEqual(['production']);
  });

  it('creates projects with canCreateProjects and keeps access to what it created', async () => {
    await grant({ canCreateProjects: true });
    const m = t.as(member.key);
    const created = await m('project.create', { name: 'member-made' });
    expect(created.status).toBe(200);
    expect((await m('project.one', { projectId: created.body.projectId })).status).toBe(200);
    expect((await m('project.remove', { projectId: created.body.projectId })).status).toBe(403);
    await grant({ canDeleteProjects: true });
    expect((await m('project.remove', { projectId: created.body.projectId })).status).toBe(200);
  });

  it('needs canCreateEnvironments and canDeleteEnvironments for environments', async () => {
    const m = t.as(member.key);
    expect((await m('environment.create', { projectId: project.projectId, name: 'm-env' })).status).toBe(403);
    await grant({ canCreateEnvironments: true });
    const env = await m('environment.create', { projectId: project.projectId, name: 'm-env' });
    expect(env.status).toBe(200);
    expect((await m('environment.remove', { environmentId: env.body.environmentId })).status).toBe(403);
    await grant({ canDeleteEnvironments: true });
    expect((await m('environment.remove', { environmentId: env.body.environmentId })).status).toBe(200);
  });

  it('refuses access lists naming records of no such id', async () => {
    const res = await grant({ accessedProjects: ['prj_missing'] });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['accessedProjects']);
    for (const field of ['accessedServers', 'accessedGitProviders']) {
      const bad = await grant({ [field]: ['missing_id'] });
      expect(bad.status).toBe(400);
      expect(bad.body.issues[0].path).toEqual([field]);
    }
    const server = (await t.call('server.create', { name: 'edge', address: '192.0.2.7' })).body;
    expect((await grant({ accessedServers: [server.serverId] })).status).toBe(200);
  });
});

describe('canAccessToAPI', () => {
  it('false makes every call of that member FORBIDDEN, true restores it', async () => {
    await grant({ canAccessToAPI: false });
    const res = await t.as(member.key)('user.get');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    await grant({ canAccessToAPI: true });
    expect((await t.as(member.key)('user.get')).status).toBe(200);
  });
});

describe('admins', () => {
  it('see everything in the organization without grants', async () => {
    const admin = await addMember(t, 'admin@example.com', 'admin');
    const res = await t.as(admin.key)('project.one', { projectId: project.projectId });
    expect(res.status).toBe(200);
    expect((await t.as(admin.key)('user.all')).status).toBe(200);
  });
});

describe('cross-organization isolation', () => {
  it('answers NOT_FOUND for records of another organization, for reads and writes', async () => {
    const other = await t.call('organization.create', { name: 'Other' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    const envId = project.environments[0]!.environmentId;
    expect((await outsider('project.one', { projectId: project.projectId })).status).toBe(404);
    expect((await outsider('environment.one', { environmentId: envId })).status).toBe(404);
    expect((await outsider('environment.byProjectId', { projectId: project.projectId })).status).toBe(404);
    expect((await outsider('project.update', { projectId: project.projectId, name: 'stolen' })).status).toBe(404);
    expect((await outsider('project.remove', { projectId: project.projectId })).status).toBe(404);
    expect((await outsider('environment.create', { projectId: project.projectId, name: 'x' })).status).toBe(404);
    expect((await outsider('project.duplicate', { sourceEnvironmentId: envId, name: 'copy' })).status).toBe(404);
    expect((await outsider('project.all')).body).toEqual([]);
    expect((await outsider('user.one', { userId: member.userId })).status).toBe(404);
    expect((await t.call('project.one', { projectId: project.projectId })).body.name).toBe('guarded');
  });
});

describe('another organization and an unknown id', () => {
  it('answer the same body (code and message; requestId aside)', async () => {
    const other = await t.call('organization.create', { name: 'Elsewhere' });
    const key = (await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: other.body.organizationId } })).body.key;
    const outsider = t.as(key);
    const env = project.environments[0]!.environmentId;
    const created = async (op: string, input: Record<string, unknown>) => {
      const res = await t.call(op, input);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body;
    };
    const app = await created('application.create', { name: 'quiet', environmentId: env });
    const stack = await created('compose.create', { name: 'quiet', environmentId: env });
    const cache = await created('cache.create', { name: 'quiet', environmentId: env, databasePassword: 'pw' });
    const forge = await created('forgeD.create', { forgeDUrl: 'https://git.example.com', accessToken: 't', organizationName: 'acme', authId: (await t.call('user.get')).body.userId, name: 'f' });
    const entry = await created('security.create', { applicationId: app.applicationId, username: 'u', password: 'p' });
    await t.db.insertInto('deployments').values({ id: 'dep_quiet', applicationId: app.applicationId, serverId: 'local', title: null, description: null, reason: null, startedAt: null, finishedAt: null }).execute();
    await t.db
      .insertInto('previewDeployments')
      .values({ id: 'pvw_quiet', applicationId: app.applicationId, appName: 'preview-quiet', branch: 'b', pullRequestId: '1', pullRequestNumber: '1', pullRequestUrl: 'https://git.example.com/p/1', pullRequestTitle: 't' })
      .execute();
    const body = async (op: string, input: Record<string, unknown>) => {
      const { requestId: _r, ...rest } = (await outsider(op, input)).body;
      return rest;
    };
    const cases: [string, string, string][] = [
      ['project.one', 'projectId', project.projectId],
      ['project.update', 'projectId', project.projectId],
      ['environment.one', 'environmentId', env],
      ['application.one', 'applicationId', app.applicationId],
      ['application.update', 'applicationId', app.applicationId],
      ['compose.one', 'composeId', stack.composeId],
      ['cache.one', 'cacheId', cache.cacheId],
      ['forgeD.one', 'forgeDId', forge.forgeDId],
      ['security.one', 'securityId', entry.securityId],
      ['deployment.readLogs', 'deploymentId', 'dep_quiet'],
      ['previewDeployment.one', 'previewDeploymentId', 'pvw_quiet'],
    ];
    const differ: string[] = [];
    for (const [op, field, id] of cases) {
      const theirs = await body(op, { [field]: id });
      const unknown = await body(op, { [field]: `${id.split('_')[0]}_unknown0000000` });
      expect(unknown.code, op).toBe('NOT_FOUND');
      if (JSON.stringify(theirs) !== JSON.stringify(unknown)) differ.push(`${op}: ${JSON.stringify(theirs)} vs ${JSON.stringify(unknown)}`);
    }
    expect(differ).toEqual([]);
  });
});
