// application.stop / start / reload / delete on a real Postgres: the commands they write to
// the outbox, and what the agent's results (sent over the real gRPC report server) do.
import { randomBytes } from 'node:crypto';
import { Metadata, credentials, type ServiceError } from '@grpc/grpc-js';
import { AgentReportsClient, Command, CommandKind, CommandStatus, WorkloadKind, timestampToDate } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

/** What an operation that queued a command answers. */
const QUEUED = { commandId: expect.stringMatching(/^cmd_/), status: 'queued' };

const credential = randomBytes(32).toString('base64url');
let t: TestPlatform;
let client: AgentReportsClient;
let env: string;
let projectId: string;

beforeAll(async () => {
  t = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, localAgentCredential: credential });
  client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, credentials.createInsecure());
  const project = (await t.call('project.create', { name: 'lifecycle' })).body;
  projectId = project.projectId;
  env = project.environments[0].environmentId;
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

async function app(options: { deployed?: boolean; serverId?: string } = {}) {
  const a = await ok('application.create', { name: 'web', environmentId: env, serverId: options.serverId ?? null });
  await ok('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  if (options.deployed !== false) await ok('application.deploy', { applicationId: a.applicationId });
  return a as { applicationId: string; appName: string };
}

/** The application's command rows, oldest first. */
const commandsOf = async (applicationId: string) =>
  (await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${applicationId}`).execute()).sort(
    (a, b) => Number(a.position) - Number(b.position),
  );
const lastCommand = async (applicationId: string) => (await commandsOf(applicationId)).at(-1)!;
const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));
const status = async (applicationId: string) => (await ok('application.one', { applicationId })).applicationStatus;

function report(commandId: string, result: CommandStatus, reason = ''): Promise<ServiceError | null> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${credential}`);
  return new Promise((resolve) =>
    client.reportCommandResult({ commandId, status: result, reason, finishedAt: undefined }, metadata, (err) => resolve(err)),
  );
}

describe('stop, start and reload', () => {
  it('write their command for the workload, in order after the deploy, and answer the command queued', async () => {
    const a = await app();
    const before = Date.now();
    expect(await ok('application.stop', { applicationId: a.applicationId })).toEqual(QUEUED);
    expect(await ok('application.start', { applicationId: a.applicationId })).toEqual(QUEUED);
    expect(await ok('application.reload', { applicationId: a.applicationId, appName: a.appName })).toEqual(QUEUED);

    const rows = await commandsOf(a.applicationId);
    expect(rows.map((r) => [r.kind, r.status, r.serverId, r.deploymentId])).toEqual([
      ['COMMAND_KIND_DEPLOY_APPLICATION', 'pending', 'local', expect.any(String)],
      ['COMMAND_KIND_STOP_WORKLOAD', 'pending', 'local', null],
      ['COMMAND_KIND_START_WORKLOAD', 'pending', 'local', null],
      ['COMMAND_KIND_RELOAD_WORKLOAD', 'pending', 'local', null],
    ]);
    const workload = { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: a.applicationId, appName: a.appName };
    const [, stop, start, reload] = rows.map((r) => decode(r.payload));
    expect(stop).toMatchObject({
      commandId: rows[1]!.id,
      serverId: 'local',
      kind: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
      workloadKey: `application:${a.applicationId}`,
      payload: { $case: 'stopWorkload', value: { workload } },
    });
    expect(start!.payload).toEqual({ $case: 'startWorkload', value: { workload } });
    expect(reload!.payload).toEqual({ $case: 'reloadWorkload', value: { workload } });
    const deadline = timestampToDate(stop!.deadline!).getTime();
    expect(deadline).toBeGreaterThanOrEqual(before + 30 * 60_000 - 1000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 30 * 60_000 + 1000);
    // Nothing has run yet.
    expect(await status(a.applicationId)).toBe('idle');
  });

  it("go to the application's server", async () => {
    const server = await ok('server.create', { name: 'worker', address: '203.0.113.9' });
    const a = await app({ serverId: server.serverId });
    await ok('application.stop', { applicationId: a.applicationId });
    const row = await lastCommand(a.applicationId);
    expect(row.serverId).toBe(server.serverId);
    expect(decode(row.payload).serverId).toBe(server.serverId);
  });

  it('are refused for an application that was never deployed, writing nothing', async () => {
    const a = await app({ deployed: false });
    for (const [op, input] of [
      ['application.stop', { applicationId: a.applicationId }],
      ['application.start', { applicationId: a.applicationId }],
      ['application.reload', { applicationId: a.applicationId, appName: a.appName }],
    ] as const) {
      const res = await t.call(op, input);
      expect(res.status, op).toBe(400);
      expect(res.body.message).toBe(`Application ${a.appName} was never deployed: deploy it first (application.deploy)`);
    }
    expect(await commandsOf(a.applicationId)).toEqual([]);
  });

  it("refuses a reload naming another application's appName", async () => {
    const a = await app();
    const res = await t.call('application.reload', { applicationId: a.applicationId, appName: 'someone-else' });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['appName']);
    expect(await commandsOf(a.applicationId)).toHaveLength(1);
  });

  it('move the status as the results come: stop → idle, start → done, reload keeps it, a failure → error', async () => {
    const a = await app();
    await t.db.updateTable('applications').set({ applicationStatus: 'done' }).where('id', '=', a.applicationId).execute();

    await ok('application.stop', { applicationId: a.applicationId });
    const stop = await lastCommand(a.applicationId);
    expect(await report(stop.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect(await status(a.applicationId)).toBe('idle');
    expect(await t.db.selectFrom('commands').select(['status', 'resultReason']).where('id', '=', stop.id).executeTakeFirst()).toEqual({
      status: 'done',
      resultReason: null,
    });

    await ok('application.start', { applicationId: a.applicationId });
    const start = await lastCommand(a.applicationId);
    expect(await report(start.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect(await status(a.applicationId)).toBe('done');

    await ok('application.reload', { applicationId: a.applicationId, appName: a.appName });
    const reload = await lastCommand(a.applicationId);
    expect(await report(reload.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect(await status(a.applicationId)).toBe('done');

    await ok('application.start', { applicationId: a.applicationId });
    const failed = await lastCommand(a.applicationId);
    const why = 'starting service web: task 1 failed: No such image: busybox:latest';
    expect(await report(failed.id, CommandStatus.COMMAND_STATUS_FAILED, why)).toBeNull();
    expect(await status(a.applicationId)).toBe('error');
    expect(await t.db.selectFrom('commands').select(['status', 'resultReason']).where('id', '=', failed.id).executeTakeFirst()).toEqual({
      status: 'failed',
      resultReason: why,
    });
    // A repeated result changes nothing.
    await t.db.updateTable('applications').set({ applicationStatus: 'done' }).where('id', '=', a.applicationId).execute();
    expect(await report(failed.id, CommandStatus.COMMAND_STATUS_FAILED, why)).toBeNull();
    expect(await status(a.applicationId)).toBe('done');
  });

  it('set error with a default reason when a command expired or was rejected', async () => {
    const a = await app();
    await ok('application.stop', { applicationId: a.applicationId });
    const stop = await lastCommand(a.applicationId);
    expect(await report(stop.id, CommandStatus.COMMAND_STATUS_EXPIRED)).toBeNull();
    expect(await status(a.applicationId)).toBe('error');
    const row = await t.db.selectFrom('commands').select('resultReason').where('id', '=', stop.id).executeTakeFirstOrThrow();
    expect(row.resultReason).toBe("the command's deadline passed before the agent could run it");

    await ok('application.reload', { applicationId: a.applicationId, appName: a.appName });
    const reload = await lastCommand(a.applicationId);
    await t.db.updateTable('applications').set({ applicationStatus: 'done' }).where('id', '=', a.applicationId).execute();
    expect(await report(reload.id, CommandStatus.COMMAND_STATUS_REJECTED, 'this agent does not handle COMMAND_KIND_RELOAD_WORKLOAD commands')).toBeNull();
    expect(await status(a.applicationId)).toBe('error');
  });
});

describe('application.delete', () => {
  it('deletes an application that was never deployed at once, with no command', async () => {
    const a = await app({ deployed: false });
    const res = await ok('application.delete', { applicationId: a.applicationId });
    expect(res.applicationId).toBe(a.applicationId);
    expect((await t.call('application.one', { applicationId: a.applicationId })).status).toBe(404);
    expect(await commandsOf(a.applicationId)).toEqual([]);
  });

  it('removes the workload first, refuses new work meanwhile, and deletes the record when the agent reports it gone', async () => {
    const a = await app();
    const deleted = await ok('application.delete', { applicationId: a.applicationId });
    expect(deleted).toMatchObject({ applicationId: a.applicationId, appName: a.appName });
    const remove = await lastCommand(a.applicationId);
    expect(remove).toMatchObject({ kind: 'COMMAND_KIND_REMOVE_WORKLOAD', status: 'pending', serverId: 'local' });
    const command = decode(remove.payload);
    expect(command.payload).toEqual({
      $case: 'removeWorkload',
      value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: a.applicationId, appName: a.appName }, removeVolumes: false },
    });
    expect(timestampToDate(command.deadline!).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000);

    // Still there while the agent works; new work is refused; a second delete adds nothing.
    expect((await t.call('application.one', { applicationId: a.applicationId })).status).toBe(200);
    for (const [op, input] of [
      ['application.deploy', { applicationId: a.applicationId }],
      ['application.stop', { applicationId: a.applicationId }],
      ['application.start', { applicationId: a.applicationId }],
      ['application.reload', { applicationId: a.applicationId, appName: a.appName }],
    ] as const) {
      const res = await t.call(op, input);
      expect(res.status, op).toBe(400);
      expect(res.body.message).toBe(`Application ${a.appName} is being deleted`);
    }
    expect((await ok('application.delete', { applicationId: a.applicationId })).applicationId).toBe(a.applicationId);
    expect(await commandsOf(a.applicationId)).toHaveLength(2);

    expect(await report(remove.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect((await t.call('application.one', { applicationId: a.applicationId })).status).toBe(404);
    expect(await t.db.selectFrom('deployments').select('id').where('applicationId', '=', a.applicationId).execute()).toEqual([]);
  });

  it('keeps the application in error when the removal fails, and can be deleted again', async () => {
    const a = await app();
    await ok('application.delete', { applicationId: a.applicationId });
    const first = await lastCommand(a.applicationId);
    expect(await report(first.id, CommandStatus.COMMAND_STATUS_FAILED, 'removeService web: engine unreachable')).toBeNull();
    expect(await status(a.applicationId)).toBe('error');

    await ok('application.delete', { applicationId: a.applicationId });
    const second = await lastCommand(a.applicationId);
    expect(second.id).not.toBe(first.id);
    expect(second.kind).toBe('COMMAND_KIND_REMOVE_WORKLOAD');
    expect(await report(second.id, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect((await t.call('application.one', { applicationId: a.applicationId })).status).toBe(404);
  });
});

describe('access', () => {
  it('follows the application: members need it granted, delete needs canDeleteServices, other organizations see nothing', async () => {
    const a = await app();
    const member = await addMember(t, `lifecycle-${randomBytes(3).toString('hex')}@test.local`);
    const m = t.as(member.key);
    expect((await m('application.stop', { applicationId: a.applicationId })).status).toBe(403);
    await ok('user.assignPermissions', {
      id: member.userId,
      accessedProjects: [projectId],
      accessedEnvironments: [env],
      accessedServices: [a.applicationId],
    });
    expect((await m('application.stop', { applicationId: a.applicationId })).status).toBe(200);
    expect((await m('application.delete', { applicationId: a.applicationId })).status).toBe(403);

    const other = await ok('organization.create', { name: 'Elsewhere' });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    const outsider = t.as(key);
    for (const op of ['application.stop', 'application.start', 'application.delete']) {
      expect((await outsider(op, { applicationId: a.applicationId })).status, op).toBe(404);
    }
    expect((await outsider('application.reload', { applicationId: a.applicationId, appName: a.appName })).status).toBe(404);
    expect((await commandsOf(a.applicationId)).map((c) => c.kind)).toEqual(['COMMAND_KIND_DEPLOY_APPLICATION', 'COMMAND_KIND_STOP_WORKLOAD']);
  });
});

describe('removing what holds applications', () => {
  const removesOf = async (applicationId: string) =>
    (await commandsOf(applicationId)).filter((c) => c.kind === 'COMMAND_KIND_REMOVE_WORKLOAD').map((c) => decode(c.payload));

  it('queues the removal of every deployed workload of a removed environment or project, and of no other', async () => {
    const project = await ok('project.create', { name: 'going' });
    const production = project.environments[0].environmentId as string;
    const staging = (await ok('environment.create', { projectId: project.projectId, name: 'staging' })).environmentId as string;
    const place = async (environmentId: string, deployed: boolean) => {
      const a = await ok('application.create', { name: 'w', environmentId });
      await ok('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
      if (deployed) await ok('application.deploy', { applicationId: a.applicationId });
      return a as { applicationId: string; appName: string };
    };
    const onStaging = await place(staging, true);
    const onProduction = await place(production, true);
    const neverDeployed = await place(production, false);

    await ok('environment.remove', { environmentId: staging });
    const [removal] = await removesOf(onStaging.applicationId);
    expect(removal?.payload).toEqual({ $case: 'removeWorkload', value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: onStaging.applicationId, appName: onStaging.appName }, removeVolumes: false } });
    expect(await removesOf(onProduction.applicationId)).toEqual([]);

    // With deleteVolumes, an application's mounted volumes (mounts.*) go with it.
    const answer = await ok('project.remove', { projectId: project.projectId, deleteVolumes: true });
    expect(answer.kept).toEqual([]);
    expect((await removesOf(onProduction.applicationId)).map((c) => c.payload)).toMatchObject([{ value: { removeVolumes: true } }]);
    expect(await removesOf(neverDeployed.applicationId)).toEqual([]);
  });

  it("queues the removal of the previews' services of a removed environment or project, and takes their domains", async () => {
    const project = await ok('project.create', { name: 'with previews' });
    const production = project.environments[0].environmentId as string;
    const staging = (await ok('environment.create', { projectId: project.projectId, name: 'staging' })).environmentId as string;
    const previewOf = async (environmentId: string, deployed: boolean) => {
      const parent = await app();
      await t.db.updateTable('applications').set({ environmentId }).where('id', '=', parent.applicationId).execute();
      const id = `prv_${randomBytes(4).toString('hex')}`;
      const appName = `preview-web-${randomBytes(3).toString('hex')}`;
      await t.db
        .insertInto('previewDeployments')
        .values({ id, applicationId: parent.applicationId, appName, branch: 'feature', pullRequestId: id, pullRequestNumber: '1', pullRequestUrl: '', pullRequestTitle: 'f' })
        .execute();
      await ok('domain.create', { host: `${appName}.preview.example.com`, previewDeploymentId: id });
      if (deployed) {
        await t.db
          .insertInto('deployments')
          .values({ id: `dep_${randomBytes(4).toString('hex')}`, applicationId: parent.applicationId, serverId: 'local', status: 'done', title: 'Preview', description: null, reason: null, startedAt: null, finishedAt: null, previewDeploymentId: id })
          .execute();
      }
      return { id, appName };
    };
    const onStaging = await previewOf(staging, true);
    const onProduction = await previewOf(production, true);
    const neverDeployed = await previewOf(production, false);

    await ok('environment.remove', { environmentId: staging });
    expect((await removesOf(onStaging.id)).map((c) => c.payload)).toEqual([
      { $case: 'removeWorkload', value: { workload: { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: onStaging.id, appName: onStaging.appName }, removeVolumes: false } },
    ]);
    expect(await removesOf(onProduction.id)).toEqual([]);

    await ok('project.remove', { projectId: project.projectId });
    expect(await removesOf(onProduction.id)).toHaveLength(1);
    expect(await removesOf(neverDeployed.id)).toEqual([]);
    const ids = [onStaging.id, onProduction.id, neverDeployed.id];
    expect(await t.db.selectFrom('domains').select('id').where('previewDeploymentId', 'in', ids).execute()).toEqual([]);
    expect(await t.db.selectFrom('previewDeployments').select('id').where('id', 'in', ids).execute()).toEqual([]);
  });

  it('queues them for every project of a removed organization', async () => {
    const other = await ok('organization.create', { name: 'Leaving' });
    const key = (await ok('user.createApiKey', { name: 'k', metadata: { organizationId: other.organizationId } })).key;
    const as = t.as(key);
    const project = (await as('project.create', { name: 'p' })).body;
    const a = (await as('application.create', { name: 'w', environmentId: project.environments[0].environmentId })).body;
    await as('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    expect((await as('application.deploy', { applicationId: a.applicationId })).status).toBe(200);
    await ok('organization.delete', { organizationId: other.organizationId });
    expect(await removesOf(a.applicationId)).toHaveLength(1);
  });
});
