import { contractsByName } from '@skiff/contracts';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, otherOrganization, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

/** The documented record, refusing any field it does not document. */
const ComposeRecord = (contractsByName.get('compose.one')!.output as z.ZodObject).strict();

let t: TestPlatform;
let env: string;
let projectId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'stacks' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(() => t?.close());

const createStack = async (overrides: Record<string, unknown> = {}) => {
  const res = await t.call('compose.create', { name: 'Monitoring Stack', environmentId: env, ...overrides });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('compose records', () => {
  it('creates with defaults and a generated appName, reads it back, and lists it in its environment', async () => {
    const stack = await createStack();
    expect(stack.appName).toMatch(/^monitoring-stack-[0-9a-f]{6}$/);
    expect(stack).toMatchObject({
      name: 'Monitoring Stack',
      sourceType: 'raw',
      composeType: 'container-compose',
      composePath: 'docker-compose.yml',
      composeFile: '',
      applicationStatus: 'idle',
      env: '',
      serverId: null,
      refreshToken: null,
    });
    // The documented record carries every field the answer has.
    expect(ComposeRecord.safeParse(stack).success).toBe(true);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body).toEqual(stack);
    const environment = await t.call('environment.one', { environmentId: env });
    const listed = environment.body.services.find((s: { id: string }) => s.id === stack.composeId);
    expect(listed).toMatchObject({ type: 'compose', appName: stack.appName });
  });

  it('takes the optional create fields', async () => {
    const stack = await createStack({
      appName: 'grafana-stack',
      sourceType: 'git',
      composeType: 'stack',
      description: 'dashboards',
      composeFile: 'services:\n  grafana:\n    image: grafana/grafana:11\n',
    });
    expect(stack).toMatchObject({ appName: 'grafana-stack', sourceType: 'git', composeType: 'stack', description: 'dashboards' });
    expect(stack.composeFile).toContain('grafana/grafana:11');
  });

  it('refuses an appName Compose cannot use as a project name, on create and on update', async () => {
    const created = await t.call('compose.create', { name: 'x', appName: 'My.Stack', environmentId: env });
    expect(created.status).toBe(400);
    expect(created.body.issues[0].path).toEqual(['appName']);
    expect(created.body.issues[0].message).toMatch(/cannot name a compose project/);
    const stack = (await t.call('compose.create', { name: 'y', appName: 'project-name-ok', environmentId: env })).body;
    const renamed = await t.call('compose.update', { composeId: stack.composeId, appName: 'Project-Name' });
    expect(renamed.status).toBe(400);
    expect(renamed.body.issues[0].path).toEqual(['appName']);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body.appName).toBe('project-name-ok');
  });

  it('keeps appName unique on a server across every kind of service, naming the field', async () => {
    await t.call('application.create', { name: 'a', appName: 'shared-name', environmentId: env });
    const clash = await t.call('compose.create', { name: 'x', appName: 'shared-name', environmentId: env });
    expect(clash.status).toBe(400);
    expect(clash.body.issues[0].path).toEqual(['appName']);
    await t.call('cache.create', { name: 'c', appName: 'cache-name', databasePassword: 'pw', environmentId: env });
    const stack = await createStack({ appName: 'stack-name' });
    const renamed = await t.call('compose.update', { composeId: stack.composeId, appName: 'cache-name' });
    expect(renamed.status).toBe(400);
    expect(renamed.body.issues[0].path).toEqual(['appName']);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body.appName).toBe('stack-name');
    // The same name on another server is free.
    await t.db.insertInto('servers').values({ id: 'srv_cmp', organizationId: t.organizationId, name: 'edge', address: '10.0.0.9', description: null }).execute();
    const elsewhere = await t.call('compose.create', { name: 'x', appName: 'shared-name', environmentId: env, serverId: 'srv_cmp' });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    expect(elsewhere.body.serverId).toBe('srv_cmp');
    // Keeping its own name is no clash.
    expect((await t.call('compose.update', { composeId: stack.composeId, appName: 'stack-name', name: 'kept' })).status).toBe(200);
  });

  it('updates every kind of field, moves the status, and refuses bad values changing nothing', async () => {
    const stack = await createStack();
    const res = await t.call('compose.update', {
      composeId: stack.composeId,
      name: 'Observability',
      sourceType: 'git',
      composeType: 'stack',
      composePath: './deploy/compose.yml',
      applicationStatus: 'done',
      description: null,
      env: 'GF_ADMIN_PASSWORD=hunter2',
      composeFile: 'services: {}\n',
      command: 'docker stack deploy',
      customGitUrl: 'git@git.example.com:acme/obs.git',
      customGitBranch: 'main',
      enableSubmodules: true,
      autoDeploy: false,
      watchPaths: ['deploy/**'],
      randomize: true,
      suffix: 'abc123',
      isolatedDeployment: true,
      isolatedDeploymentsVolume: true,
      triggerType: 'tag',
      forgeBProjectId: 42,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Observability',
      sourceType: 'git',
      composeType: 'stack',
      composePath: './deploy/compose.yml',
      applicationStatus: 'done',
      description: null,
      env: 'GF_ADMIN_PASSWORD=hunter2',
      customGitUrl: 'git@git.example.com:acme/obs.git',
      watchPaths: ['deploy/**'],
      autoDeploy: false,
      randomize: true,
      suffix: 'abc123',
      isolatedDeployment: true,
      triggerType: 'tag',
      forgeBProjectId: 42,
    });
    expect(ComposeRecord.safeParse(res.body).success).toBe(true);

    for (const [field, value] of [
      ['customGitUrl', 'file:///etc/passwd'],
      ['composePath', '../../etc/passwd'],
      ['composePath', '/etc/passwd'],
      ['suffix', 'a b;rm'],
      ['forgeBProjectId', 1.5],
      ['customGitSSHKeyId', 'key_missing'],
      ['forgeAId', 'fga_missing'],
      ['forgeDId', 'fgd_missing'],
      ['applicationStatus', 'sleeping'],
      ['branch', 'bad branch!'],
    ] as const) {
      const bad = await t.call('compose.update', { composeId: stack.composeId, name: 'changed', [field]: value });
      expect(bad.status, field).toBe(400);
      expect(bad.body.issues[0].path[0]).toBe(field);
    }
    expect((await t.call('compose.one', { composeId: stack.composeId })).body).toEqual(res.body);
  });

  it('accepts references to records of the organization', async () => {
    const stack = await createStack();
    await t.db
      .insertInto('sshKeys')
      .values({ id: 'key_cmp', organizationId: t.organizationId, name: 'deploy', description: null, publicKey: 'ssh-ed25519 AAAA', privateKey: t.platform.secrets.seal('k') })
      .execute();
    const res = await t.call('compose.update', {
      composeId: stack.composeId,
      sourceType: 'git',
      customGitUrl: 'git@git.example.com:acme/obs.git',
      customGitSSHKeyId: 'key_cmp',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.customGitSSHKeyId).toBe('key_cmp');
  });

  it('keeps env and the webhook token encrypted at rest, and renews the token', async () => {
    const stack = await createStack();
    await t.call('compose.update', { composeId: stack.composeId, env: 'SECRET=opensesame' });
    const first = await t.call('compose.refreshToken', { composeId: stack.composeId });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.refreshToken).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const second = await t.call('compose.refreshToken', { composeId: stack.composeId });
    expect(second.body.refreshToken).not.toBe(first.body.refreshToken);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body.refreshToken).toBe(second.body.refreshToken);
    const row = await t.db.selectFrom('composeStacks').selectAll().where('id', '=', stack.composeId).executeTakeFirstOrThrow();
    const stored = JSON.stringify(row);
    expect(stored).not.toContain('opensesame');
    expect(stored).not.toContain(second.body.refreshToken);
  });

  it('disconnects its source back to raw, keeping the compose file', async () => {
    const stack = await createStack({ composeFile: 'services: {}\n' });
    await t.call('compose.update', {
      composeId: stack.composeId,
      sourceType: 'git',
      customGitUrl: 'https://git.example.com/acme/obs.git',
      customGitBranch: 'main',
      repository: 'obs',
      owner: 'acme',
      watchPaths: ['x/**'],
      enableSubmodules: true,
    });
    const off = await t.call('compose.disconnectGitProvider', { composeId: stack.composeId });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({
      sourceType: 'raw',
      customGitUrl: null,
      customGitBranch: null,
      repository: null,
      owner: null,
      watchPaths: null,
      enableSubmodules: false,
      composeFile: 'services: {}\n',
    });
  });

  it('moves between environments of the organization, and refuses another organization’s', async () => {
    const stack = await createStack();
    const staging = (await t.call('environment.create', { projectId, name: 'staging-cmp' })).body.environmentId;
    const other = await t.call('project.create', { name: 'other-project' });
    const moved = await t.call('compose.move', { composeId: stack.composeId, targetEnvironmentId: staging });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({ composeId: stack.composeId, environmentId: staging, appName: stack.appName });
    const across = await t.call('compose.move', { composeId: stack.composeId, targetEnvironmentId: other.body.environments[0].environmentId });
    expect(across.body.environmentId).toBe(other.body.environments[0].environmentId);

    const outsider = await otherOrganization(t);
    const foreignEnv = (await outsider('project.create', { name: 'theirs' })).body.environments[0].environmentId;
    const refused = await t.call('compose.move', { composeId: stack.composeId, targetEnvironmentId: foreignEnv });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].path).toEqual(['targetEnvironmentId']);
    const missing = await t.call('compose.move', { composeId: stack.composeId, targetEnvironmentId: 'env_missing' });
    expect(missing.status).toBe(400);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body.environmentId).toBe(other.body.environments[0].environmentId);
  });

  it('deletes the record, saying whether volumes go too', async () => {
    const stack = await createStack();
    const deleted = await t.call('compose.delete', { composeId: stack.composeId, deleteVolumes: true });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ composeId: stack.composeId, deleteVolumes: true });
    expect((await t.call('compose.one', { composeId: stack.composeId })).status).toBe(404);
    const kept = await createStack();
    expect((await t.call('compose.delete', { composeId: kept.composeId })).body.deleteVolumes).toBe(false);
  });

  it('is removed with its project, which says so', async () => {
    const project = (await t.call('project.create', { name: 'doomed' })).body;
    const e = project.environments[0].environmentId;
    const a = (await t.call('compose.create', { name: 'a', environmentId: e })).body;
    await t.call('compose.create', { name: 'b', environmentId: e });
    const removed = await t.call('project.remove', { projectId: project.projectId });
    expect(removed.status).toBe(200);
    expect(removed.body.removed).toMatchObject({ environments: 1, compose: 2 });
    expect((await t.call('compose.one', { composeId: a.composeId })).status).toBe(404);
    expect(await t.db.selectFrom('composeStacks').select('id').where('environmentId', '=', e).execute()).toEqual([]);
  });

  it('refuses an environment or server that does not exist, or another organization’s server', async () => {
    expect((await t.call('compose.create', { name: 'x', environmentId: 'env_missing' })).status).toBe(404);
    const noServer = await t.call('compose.create', { name: 'x', environmentId: env, serverId: 'srv_missing' });
    expect(noServer.status).toBe(400);
    expect(noServer.body.issues[0].path).toEqual(['serverId']);
    const org = await t.call('organization.create', { name: 'Server owner' });
    await t.db.insertInto('servers').values({ id: 'srv_foreign_cmp', organizationId: org.body.organizationId, name: 'x', address: '10.0.0.8', description: null }).execute();
    const foreign = await t.call('compose.create', { name: 'x', environmentId: env, serverId: 'srv_foreign_cmp' });
    expect(foreign.status).toBe(400);
    expect(foreign.body.issues[0].path).toEqual(['serverId']);
  });
});

describe('compose permissions', () => {
  it('lets an admin do everything', async () => {
    const admin = await addMember(t, 'admin-cmp@example.com', 'admin');
    const a = t.as(admin.key);
    const made = await a('compose.create', { name: 'admin stack', environmentId: env });
    expect(made.status).toBe(200);
    const owners = await createStack();
    expect((await a('compose.update', { composeId: owners.composeId, name: 'by admin' })).status).toBe(200);
    expect((await a('compose.delete', { composeId: made.body.composeId })).status).toBe(200);
  });

  it('lets a member act only with the grants and services given', async () => {
    const member = await addMember(t, 'dev-cmp@example.com');
    const m = t.as(member.key);
    const stack = await createStack();
    const staging = (await t.call('environment.create', { projectId, name: 'staging-perm' })).body.environmentId;
    for (const [op, input] of [
      ['compose.one', { composeId: stack.composeId }],
      ['compose.update', { composeId: stack.composeId, name: 'nope' }],
      ['compose.refreshToken', { composeId: stack.composeId }],
      ['compose.disconnectGitProvider', { composeId: stack.composeId }],
      ['compose.move', { composeId: stack.composeId, targetEnvironmentId: env }],
      ['compose.create', { name: 'x', environmentId: env }],
      ['compose.delete', { composeId: stack.composeId }],
    ] as const) {
      expect((await m(op, input)).status, op).toBe(403);
    }

    await t.call('user.assignPermissions', {
      id: member.userId,
      accessedProjects: [projectId],
      accessedEnvironments: [env],
      accessedServices: [stack.composeId],
    });
    expect((await m('compose.one', { composeId: stack.composeId })).status).toBe(200);
    expect((await m('compose.update', { composeId: stack.composeId, name: 'by member' })).status).toBe(200);
    expect((await m('compose.refreshToken', { composeId: stack.composeId })).status).toBe(200);
    expect((await m('compose.create', { name: 'x', environmentId: env })).status).toBe(403);
    // Moving needs the target environment too.
    expect((await m('compose.move', { composeId: stack.composeId, targetEnvironmentId: staging })).status).toBe(403);
    expect((await t.call('compose.one', { composeId: stack.composeId })).body.environmentId).toBe(env);

    await t.call('user.assignPermissions', { id: member.userId, canCreateServices: true, accessedEnvironments: [env, staging] });
    expect((await m('compose.move', { composeId: stack.composeId, targetEnvironmentId: staging })).status).toBe(200);
    const own = await m('compose.create', { name: 'mine', environmentId: env });
    expect(own.status).toBe(200);
    expect((await m('compose.one', { composeId: own.body.composeId })).status).toBe(200);
    expect((await m('compose.delete', { composeId: own.body.composeId })).status).toBe(403);
    await t.call('user.assignPermissions', { id: member.userId, canDeleteServices: true });
    expect((await m('compose.delete', { composeId: own.body.composeId })).status).toBe(200);
  });

  it('answers NOT_FOUND to another organization, for reads and writes', async () => {
    const stack = await createStack();
    const outsider = await otherOrganization(t);
    const theirEnv = (await outsider('project.create', { name: 'theirs' })).body.environments[0].environmentId;
    for (const [op, input] of [
      ['compose.one', { composeId: stack.composeId }],
      ['compose.update', { composeId: stack.composeId, name: 'stolen' }],
      ['compose.refreshToken', { composeId: stack.composeId }],
      ['compose.disconnectGitProvider', { composeId: stack.composeId }],
      ['compose.move', { composeId: stack.composeId, targetEnvironmentId: theirEnv }],
      ['compose.delete', { composeId: stack.composeId }],
      ['compose.create', { name: 'x', environmentId: env }],
    ] as const) {
      expect((await outsider(op, input)).status, op).toBe(404);
    }
    const after = (await t.call('compose.one', { composeId: stack.composeId })).body;
    expect(after).toEqual(stack);
  });
});
