import { Command, CommandKind, CommandStatus, WorkloadKind, timestampToDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomIds } from '../../ids.js';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { sentSpec } from '../../testing/sent-spec.js';

// The command id generator can be told to hand out one id twice, so a command insert fails
// inside the deploy transaction (to show that the deployment row goes with it).
let repeatCommandId: string | undefined;
const ids = (prefix: string) => (prefix === 'cmd' && repeatCommandId ? repeatCommandId : randomIds(prefix));

let t: TestPlatform;
let project: { projectId: string; environments: { environmentId: string }[] };
let env: string;
beforeAll(async () => {
  t = await startTestPlatform({ ids });
  // Env values and build secrets of the deploys below: never in a log (close() checks).
  t.watch.secret('hunter2');
  t.watch.secret('npm-s3cret');
  project = (await t.call('project.create', { name: 'shop', env: 'REGION=eu\nDB_HOST=db.internal' })).body;
  env = project.environments[0]!.environmentId;
  await t.call('environment.update', { environmentId: env, env: 'TIER=staging' });
});
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function containerApp(overrides: Record<string, unknown> = {}, image = 'busybox:latest') {
  const app = await ok('application.create', { name: 'web', environmentId: env, ...overrides });
  await ok('application.saveContainerProvider', {
    applicationId: app.applicationId,
    containerImage: image,
    username: null,
    password: null,
    registryUrl: null,
  });
  return app as { applicationId: string; appName: string };
}

const rowsOf = async (applicationId: string) => ({
  deployments: await t.db.selectFrom('deployments').selectAll().where('applicationId', '=', applicationId).execute(),
  commands: await t.db
    .selectFrom('commands')
    .selectAll()
    .where('workloadKey', '=', `application:${applicationId}`)
    .execute(),
});

const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));

describe('application.deploy', () => {
  it('writes a queued deployment and its command, with the resolved env and the settings', async () => {
    const app = await containerApp();
    await ok('application.update', {
      applicationId: app.applicationId,
      env: 'DB_URL=postgres://${{project.DB_HOST}}/shop\nSTAGE=${{environment.TIER}}\nSECRET_TOKEN=hunter2',
      replicas: 2,
      command: 'httpd -f',
      args: ['-p', '8080'],
      memoryLimit: '67108864',
      labelsCluster: { team: 'web' },
    });
    const before = Date.now();
    const res = await ok('application.deploy', { applicationId: app.applicationId, title: 'First', description: 'hello' });
    expect(res).toMatchObject({
      applicationId: app.applicationId,
      serverId: null,
      status: 'queued',
      title: 'First',
      description: 'hello',
      reason: null,
      startedAt: null,
      finishedAt: null,
    });

    const { deployments, commands } = await rowsOf(app.applicationId);
    expect(deployments.map((d) => [d.id, d.status, d.serverId])).toEqual([[res.deploymentId, 'queued', 'local']]);
    expect(commands).toHaveLength(1);
    const row = commands[0]!;
    expect(row).toMatchObject({ serverId: 'local', kind: 'COMMAND_KIND_DEPLOY_APPLICATION', status: 'pending', deploymentId: res.deploymentId, attempts: 0 });
    // Secrets stay sealed in the outbox.
    expect(row.payload).not.toContain('hunter2');
    expect(row.payload).toMatch(/^v1:/);
    expect(row.payload).not.toContain(Buffer.from('hunter2').toString('base64').slice(0, 8));

    const command = decode(row.payload);
    expect(command).toMatchObject({
      commandId: row.id,
      serverId: 'local',
      kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
      workloadKey: `application:${app.applicationId}`,
    });
    const deadline = timestampToDate(command.deadline!).getTime();
    expect(deadline).toBeGreaterThanOrEqual(before + 15 * 60_000 - 1000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 15 * 60_000 + 1000);
    expect(command.payload?.$case).toBe('deployApplication');
    const deploy = command.payload!.$case === 'deployApplication' ? command.payload!.value : undefined;
    expect(deploy).toMatchObject({
      deploymentId: res.deploymentId,
      workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: app.applicationId, appName: app.appName },
      image: 'busybox:latest',
      forcePull: false,
      env: {
        REGION: 'eu',
        DB_HOST: 'db.internal',
        TIER: 'staging',
        DB_URL: 'postgres://db.internal/shop',
        STAGE: 'staging',
        SECRET_TOKEN: 'hunter2',
      },
    });
    const spec = sentSpec(deploy!);
    expect(spec).toMatchObject({
      appName: app.appName,
      kind: 'application',
      id: app.applicationId,
      image: 'busybox:latest',
      env: [],
      command: 'httpd -f',
      args: ['-p', '8080'],
      replicas: 2,
      memoryLimit: '67108864',
      labelsCluster: { team: 'web' },
      platformNetwork: 'skiff-network',
      forceUpdate: 1,
    });
    for (const k of ['healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster', 'rollbackConfigCluster', 'modeCluster', 'networkCluster', 'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster']) {
      expect(spec[k as keyof typeof spec], k).toBeUndefined(); // not set: Skiff's default
    }
    expect(JSON.stringify(deploy!.spec)).not.toContain('hunter2');

    // The application itself is not running yet.
    expect((await ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('idle');
  });

  it('redeploys with a default title, a new command and a higher forceUpdate', async () => {
    const app = await containerApp();
    const first = await ok('application.deploy', { applicationId: app.applicationId });
    const second = await ok('application.redeploy', { applicationId: app.applicationId });
    expect(first.title).toBe('Deploy');
    expect(second.title).toBe('Redeploy');
    const { deployments, commands } = await rowsOf(app.applicationId);
    expect(deployments).toHaveLength(2);
    expect(commands).toHaveLength(2);
    const specs = commands
      .sort((a, b) => Number(a.position) - Number(b.position))
      .map((c) => decode(c.payload).payload!)
      .map((p) => (p.$case === 'deployApplication' ? sentSpec(p.value).forceUpdate : null));
    expect(specs).toEqual([1, 2]);
  });

  it('sends a server application to that server', async () => {
    const server = await ok('server.create', { name: 'worker', address: '203.0.113.7' });
    const app = await containerApp({ serverId: server.serverId });
    const res = await ok('application.deploy', { applicationId: app.applicationId });
    expect(res.serverId).toBe(server.serverId);
    const { commands } = await rowsOf(app.applicationId);
    expect(commands[0]!.serverId).toBe(server.serverId);
    expect(decode(commands[0]!.payload).serverId).toBe(server.serverId);
  });

  it('refuses an undefined env reference, naming env, and writes nothing', async () => {
    const app = await containerApp();
    await ok('application.update', { applicationId: app.applicationId, env: 'A=${{environment.MISSING}}' });
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('Invalid environment variable: environment.MISSING');
    expect(res.body.issues[0].path).toEqual(['env']);
    expect(await rowsOf(app.applicationId)).toEqual({ deployments: [], commands: [] });
  });

  it('refuses an env too big for a command to carry, naming env, and writes nothing', async () => {
    const app = await containerApp();
    // About 2 MiB: under the 5 MiB request limit, over the ~1 MiB NATS carries.
    await ok('application.update', { applicationId: app.applicationId, env: `BIG=${'x'.repeat(2 * 1024 * 1024)}` });
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(res.body.issues[0].path).toEqual(['env']);
    expect(res.body.message).toMatch(/env is \d+ bytes/);
    expect(await rowsOf(app.applicationId)).toEqual({ deployments: [], commands: [] });
  });

  it('refuses a forge source without its connection, a git source without its URL and a missing image, naming the field', async () => {
    const git = await ok('application.create', { name: 'from-git', environmentId: env });
    const res = await t.call('application.deploy', { applicationId: git.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['customGitUrl']);
    const forge = await ok('application.create', { name: 'from-forge', environmentId: env, sourceType: 'forgeA' });
    const refused = await t.call('application.deploy', { applicationId: forge.applicationId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0]).toEqual({ path: ['forgeAId'], message: 'no forgeA connection set (application.saveForgeAProvider)' });

    const noImage = await containerApp();
    await ok('application.saveContainerProvider', { applicationId: noImage.applicationId, containerImage: null, username: null, password: null, registryUrl: null });
    const missing = await t.call('application.redeploy', { applicationId: noImage.applicationId });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].path).toEqual(['containerImage']);
    expect((await rowsOf(git.applicationId)).deployments).toEqual([]);
  });

  it('refuses settings the Swarm spec builder refuses, before anything is queued', async () => {
    const app = await containerApp({}, 'not a valid image!');
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('is not a valid image reference');
    expect(await rowsOf(app.applicationId)).toEqual({ deployments: [], commands: [] });
  });

  it('writes the deployment and its command together or not at all', async () => {
    const app = await containerApp();
    await ok('application.deploy', { applicationId: app.applicationId });
    const { commands } = await rowsOf(app.applicationId);
    repeatCommandId = commands[0]!.id;
    try {
      const res = await t.call('application.deploy', { applicationId: app.applicationId });
      expect(res.status).toBe(500);
    } finally {
      repeatCommandId = undefined;
    }
    const after = await rowsOf(app.applicationId);
    expect(after.deployments).toHaveLength(1);
    expect(after.commands).toHaveLength(1);
  });
});

describe('deployment.all and deployment.readLogs', () => {
  it('lists newest first without logs, and reads a log with its status', async () => {
    const app = await containerApp();
    const a = await ok('application.deploy', { applicationId: app.applicationId, title: 'one' });
    const b = await ok('application.deploy', { applicationId: app.applicationId, title: 'two' });
    await t.db.updateTable('deployments').set({ log: 'pulling\nstarted\n', status: 'running' }).where('id', '=', a.deploymentId).execute();
    const list = await ok('deployment.all', { applicationId: app.applicationId });
    expect(list.map((d: { title: string }) => d.title)).toEqual(['two', 'one']);
    expect(list[0]).toEqual(b);
    expect(list[1]).not.toHaveProperty('log');
    expect(await ok('deployment.readLogs', { deploymentId: a.deploymentId })).toEqual({
      deploymentId: a.deploymentId,
      status: 'running',
      reason: null,
      log: 'pulling\nstarted\n',
    });
    expect((await t.call('deployment.readLogs', { deploymentId: 'dep_nothing' })).status).toBe(404);
    expect((await t.call('deployment.all', { applicationId: 'app_nothing' })).status).toBe(404);
  });

  it('follows access to the application: members need it granted, other organizations see nothing', async () => {
    const app = await containerApp();
    const dep = await ok('application.deploy', { applicationId: app.applicationId });
    const member = await addMember(t, `m-${Date.now()}@test.local`);
    const m = t.as(member.key);
    expect((await m('deployment.all', { applicationId: app.applicationId })).status).toBe(403);
    expect((await m('deployment.readLogs', { deploymentId: dep.deploymentId })).status).toBe(403);
    expect((await m('application.deploy', { applicationId: app.applicationId })).status).toBe(403);
    await ok('user.assignPermissions', {
      id: member.userId,
      accessedProjects: [project.projectId],
      accessedEnvironments: [env],
      accessedServices: [app.applicationId],
    });
    expect((await m('deployment.all', { applicationId: app.applicationId })).status).toBe(200);
    expect((await m('deployment.readLogs', { deploymentId: dep.deploymentId })).status).toBe(200);
    expect((await m('application.redeploy', { applicationId: app.applicationId })).status).toBe(200);

    const other = await ok('organization.create', { name: 'Elsewhere' });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    const outsider = t.as(key);
    expect((await outsider('deployment.all', { applicationId: app.applicationId })).status).toBe(404);
    expect((await outsider('deployment.readLogs', { deploymentId: dep.deploymentId })).status).toBe(404);
    expect((await outsider('application.deploy', { applicationId: app.applicationId })).status).toBe(404);
    expect((await rowsOf(app.applicationId)).deployments).toHaveLength(2);
  });

  it('removes deployments with their application, keeping the command rows', async () => {
    const app = await containerApp();
    await ok('application.deploy', { applicationId: app.applicationId });
    await ok('application.delete', { applicationId: app.applicationId });
    // A deployed application goes once its agent reports the workload removed.
    const remove = (await rowsOf(app.applicationId)).commands.find((c) => c.kind === 'COMMAND_KIND_REMOVE_WORKLOAD')!;
    await new DeploymentReports({ db: t.db, clock: () => new Date() }).applyCommandResult('local', {
      commandId: remove.id,
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
    });
    const { deployments, commands } = await rowsOf(app.applicationId);
    expect(deployments).toEqual([]);
    expect(commands.map((c) => c.deploymentId)).toEqual([null, null]);
  });
});

describe('application.deploy of a source that is built', () => {
  const deployOf = (payload: string) => {
    const command = decode(payload);
    return { command, deploy: command.payload!.$case === 'deployApplication' ? command.payload!.value : undefined };
  };

  it('sends a git source with its SSH key, the recipe with resolved build args and secrets, a per-deployment image tag and a longer deadline', async () => {
    const key = await ok('sshKey.generate', { name: 'deploy key' });
    const app = await ok('application.create', { name: 'Built Web', appName: 'Built_Web.1', environmentId: env });
    await ok('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: 'https://git.example.com/acme/shop.git',
      customGitBranch: 'release/2',
      customGitBuildPath: '/services/web',
      watchPaths: null,
      enableSubmodules: true,
      customGitSSHKeyId: key.sshKeyId,
    });
    await ok('application.saveBuildType', {
      applicationId: app.applicationId,
      buildType: 'containerfile',
      containerfile: 'docker/Containerfile',
      containerContextPath: '.',
      containerBuildStage: 'runtime',
      legacyVersion: null,
      packTwoVersion: null,
    });
    await ok('application.saveEnvironment', {
      applicationId: app.applicationId,
      env: 'RUNTIME_ONLY=1',
      buildArgs: 'NODE_VERSION=20\nAPI_HOST=${{project.DB_HOST}}\nLABEL=${{NODE_VERSION}}-${{environment.TIER}}',
      buildSecrets: 'NPM_TOKEN=npm-s3cret',
      createEnvFile: false,
    });
    const before = Date.now();
    const res = await ok('application.deploy', { applicationId: app.applicationId });
    const { commands } = await rowsOf(app.applicationId);
    expect(commands[0]!.payload).not.toContain('npm-s3cret');
    const { command, deploy } = deployOf(commands[0]!.payload);
    expect(timestampToDate(command.deadline!).getTime()).toBeGreaterThanOrEqual(before + 60 * 60_000 - 1000);
    expect(deploy!.image).toBe(`built-web-1:${res.deploymentId}`);
    expect(sentSpec(deploy!).image).toBe(`built-web-1:${res.deploymentId}`);
    expect(deploy!.registryAuth).toBeUndefined();
    expect(deploy!.source?.kind?.$case).toBe('git');
    const git = deploy!.source!.kind!.$case === 'git' ? deploy!.source!.kind!.value : undefined;
    expect(git).toMatchObject({ url: 'https://git.example.com/acme/shop.git', branch: 'release/2', submodules: true });
    expect(git!.sshPrivateKey).toContain('PRIVATE KEY');
    // The operator's outbound policy travels with the source (the harness allows private destinations).
    expect(git!.outbound).toEqual({ allowPrivate: true });
    expect(deploy!.build).toEqual({
      type: 1, // BUILD_TYPE_CONTAINERFILE
      buildPath: '/services/web',
      containerfile: 'docker/Containerfile',
      contextPath: '.',
      buildStage: 'runtime',
      // Only the names the text defines, references resolved.
      buildArgs: { NODE_VERSION: '20', API_HOST: 'db.internal', LABEL: '20-staging' },
      buildSecrets: { NPM_TOKEN: 'npm-s3cret' },
      publishDirectory: '',
      staticSpa: false,
      builderVersion: '',
    });
  });

  it('refuses an undefined reference in build args naming buildArgs, and a drop source without an archive', async () => {
    const app = await ok('application.create', { name: 'args', environmentId: env });
    await ok('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: 'https://git.example.com/acme/shop.git',
      customGitBranch: 'main',
      customGitBuildPath: null,
      watchPaths: null,
    });
    await ok('application.saveEnvironment', { applicationId: app.applicationId, env: '', buildArgs: 'X=${{environment.NOPE}}', buildSecrets: null, createEnvFile: false });
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['buildArgs']);
    expect(res.body.message).toContain('environment.NOPE');
    // Build secrets too big for a command to carry: refused naming them, nothing written.
    await ok('application.saveEnvironment', { applicationId: app.applicationId, env: '', buildArgs: 'X=1', buildSecrets: `S=${'s'.repeat(1536 * 1024)}`, createEnvFile: false });
    const big = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(big.status).toBe(400);
    expect(big.body.issues[0].path).toEqual(['buildSecrets']);
    expect(await rowsOf(app.applicationId)).toEqual({ deployments: [], commands: [] });

    const drop = await ok('application.create', { name: 'dropped', environmentId: env, sourceType: 'drop' });
    const none = await t.call('application.deploy', { applicationId: drop.applicationId });
    expect(none.status).toBe(400);
    expect(none.body.issues[0].path).toEqual(['archive']);
    expect(await rowsOf(drop.applicationId)).toEqual({ deployments: [], commands: [] });
  });

  it('sends a static recipe with its publish directory', async () => {
    const app = await ok('application.create', { name: 'site', environmentId: env });
    await ok('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: 'git@git.example.com:acme/site.git',
      customGitBranch: 'main',
      customGitBuildPath: null,
      watchPaths: null,
    });
    await ok('application.saveBuildType', {
      applicationId: app.applicationId,
      buildType: 'static',
      containerfile: null,
      containerContextPath: null,
      containerBuildStage: null,
      legacyVersion: null,
      packTwoVersion: null,
      publishDirectory: 'dist',
      isStaticSpa: true,
    });
    await ok('application.deploy', { applicationId: app.applicationId });
    const { deploy } = deployOf((await rowsOf(app.applicationId)).commands[0]!.payload);
    expect(deploy!.build).toMatchObject({ type: 2, publishDirectory: 'dist', staticSpa: true, buildPath: '' });
  });
});
