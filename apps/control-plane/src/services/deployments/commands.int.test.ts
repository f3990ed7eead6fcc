// command.one: following what stop, start, reload and the cache operations queued, through
// the agent's real result reports (gRPC), with the access rules of the workload.
import { randomBytes } from 'node:crypto';
import { Metadata, credentials, type ServiceError } from '@grpc/grpc-js';
import { REMOVED_REASON } from '@skiff/domain';
import { AgentReportsClient, CommandStatus } from '@skiff/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, startTestPlatform, type TestPlatform } from '../../testing/harness.js';

const credential = randomBytes(32).toString('base64url');
let t: TestPlatform;
let client: AgentReportsClient;
let env: string;

beforeAll(async () => {
  t = await startTestPlatform({ grpc: { host: '127.0.0.1', port: 0 }, localAgentCredential: credential });
  client = new AgentReportsClient(`127.0.0.1:${t.platform.grpcPort}`, credentials.createInsecure());
  env = (await ok('project.create', { name: 'follow' })).environments[0].environmentId;
});
afterAll(async () => {
  client?.close();
  await t?.close();
});

async function ok(op: string, input: Record<string, unknown>, call = t.call) {
  const r = await call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
}

async function deployedApp() {
  const a = await ok('application.create', { name: 'web', environmentId: env });
  await ok('application.saveContainerProvider', { applicationId: a.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
  await ok('application.deploy', { applicationId: a.applicationId });
  return a as { applicationId: string; appName: string };
}

function report(commandId: string, status: CommandStatus, reason = ''): Promise<ServiceError | null> {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${credential}`);
  return new Promise((resolve) => client.reportCommandResult({ commandId, status, reason, finishedAt: undefined }, metadata, (err) => resolve(err)));
}

describe('operations that queue a command', () => {
  it('answer the command they queued, and command.one follows it to its end', async () => {
    const a = await deployedApp();
    const stop = await ok('application.stop', { applicationId: a.applicationId });
    expect(stop).toEqual({ commandId: expect.stringMatching(/^cmd_/), status: 'queued' });
    const row = await t.db.selectFrom('commands').select(['kind', 'workloadKey']).where('id', '=', stop.commandId).executeTakeFirstOrThrow();
    expect(row).toEqual({ kind: 'COMMAND_KIND_STOP_WORKLOAD', workloadKey: `application:${a.applicationId}` });

    expect(await ok('command.one', { commandId: stop.commandId })).toEqual({
      commandId: stop.commandId,
      operation: 'stop',
      applicationId: a.applicationId,
      composeId: null,
      cacheId: null,
      deploymentId: null,
      serverId: null,
      status: 'queued',
      reason: null,
      createdAt: expect.any(String),
      sentAt: null,
      finishedAt: null,
      deadline: expect.any(String),
    });
    expect(await report(stop.commandId, CommandStatus.COMMAND_STATUS_SUCCEEDED)).toBeNull();
    expect(await ok('command.one', { commandId: stop.commandId })).toMatchObject({ status: 'done', reason: null, finishedAt: expect.any(String) });

    const start = await ok('application.start', { applicationId: a.applicationId });
    expect(await report(start.commandId, CommandStatus.COMMAND_STATUS_FAILED, 'task exited with code 1')).toBeNull();
    expect(await ok('command.one', { commandId: start.commandId })).toMatchObject({ operation: 'start', status: 'failed', reason: 'task exited with code 1' });

    const reload = await ok('application.reload', { applicationId: a.applicationId, appName: a.appName });
    expect(await report(reload.commandId, CommandStatus.COMMAND_STATUS_CANCELLED, REMOVED_REASON)).toBeNull();
    expect(await ok('command.one', { commandId: reload.commandId })).toMatchObject({ operation: 'reload', status: 'cancelled', reason: REMOVED_REASON });
  });

  it('answer it for cache instances too (deploy, rebuild, stop, start, reload)', async () => {
    const c = await ok('cache.create', { name: 'sessions', environmentId: env, databasePassword: 'a-cache-password' });
    t.watch.secret('a-cache-password');
    const deploy = await ok('cache.deploy', { cacheId: c.cacheId });
    expect(deploy).toEqual({ commandId: expect.stringMatching(/^cmd_/), status: 'queued' });
    expect(await ok('command.one', { commandId: deploy.commandId })).toMatchObject({ operation: 'deploy', cacheId: c.cacheId, applicationId: null, status: 'queued' });
    const rebuild = await ok('cache.rebuild', { cacheId: c.cacheId });
    expect(await ok('command.one', { commandId: rebuild.commandId })).toMatchObject({ operation: 'deploy', cacheId: c.cacheId });
    for (const [op, input] of [
      ['cache.stop', { cacheId: c.cacheId }],
      ['cache.start', { cacheId: c.cacheId }],
      ['cache.reload', { cacheId: c.cacheId, appName: c.appName }],
    ] as const) {
      const queued = await ok(op, input);
      expect(queued.status).toBe('queued');
      expect(await ok('command.one', { commandId: queued.commandId })).toMatchObject({ operation: op.split('.')[1], cacheId: c.cacheId });
    }
  });

  it('command.one follows the access rules of the workload', async () => {
    const a = await deployedApp();
    const { commandId } = await ok('application.stop', { applicationId: a.applicationId });

    const member = await addMember(t, `follow-${randomBytes(4).toString('hex')}@example.com`);
    expect((await t.as(member.key)('command.one', { commandId })).status).toBe(403);

    const other = await ok('organization.create', { name: 'Elsewhere' });
    const key = (await ok('user.createApiKey', { name: 'o', metadata: { organizationId: other.organizationId } })).key;
    t.watch.secret(key);
    const outsider = await t.as(key)('command.one', { commandId });
    expect(outsider.status).toBe(404);
    expect(outsider.body.message).toBe('No such command');
    expect((await ok('command.one', { commandId }, t.call)).status).toBe('queued');
    expect((await t.call('command.one', { commandId: 'cmd_nothing' })).status).toBe(404);
  });
});
