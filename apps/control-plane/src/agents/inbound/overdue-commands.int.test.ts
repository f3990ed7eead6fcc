// Commands whose server never ran them before their deadline: the sweep ends them, so every
// deployment accepted by the API ends. No NATS here: the commands are never published, as
// when their server is offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let now = new Date('2026-11-22T10:00:00Z');
let t: TestPlatform;
let env: string;
beforeAll(async () => {
  t = await startTestPlatform({ clock: () => now });
  env = (await t.call('project.create', { name: 'offline' })).body.environments[0].environmentId;
});
afterAll(() => t?.close());

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

const minutes = (n: number) => new Date(now.getTime() + n * 60_000);
const commandsOf = (applicationId: string) =>
  t.db.selectFrom('commands').select(['kind', 'status', 'resultReason']).where('workloadKey', '=', `application:${applicationId}`).orderBy('position').execute();

describe('commands past their deadline', () => {
  it('end a queued deployment in error with the reason, and no earlier', async () => {
    const app = await ok('application.create', { name: 'web', environmentId: env });
    await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    const deployment = await ok('application.deploy', { applicationId: app.applicationId });

    now = minutes(14);
    expect(await t.platform.expireOverdueCommands()).toBe(0);
    expect((await ok('deployment.all', { applicationId: app.applicationId }))[0].status).toBe('queued');

    now = minutes(2);
    expect(await t.platform.expireOverdueCommands()).toBe(1);
    const logs = await ok('deployment.readLogs', { deploymentId: deployment.deploymentId });
    expect(logs.status).toBe('error');
    expect(logs.reason).toBe('the deadline passed before server local ran the command');
    expect((await ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('error');
    expect(await commandsOf(app.applicationId)).toEqual([
      { kind: 'COMMAND_KIND_DEPLOY_APPLICATION', status: 'failed', resultReason: 'the deadline passed before server local ran the command' },
    ]);
    expect(await t.platform.expireOverdueCommands()).toBe(0);
  });

  it('end a lifecycle command too: its application goes to error', async () => {
    const app = await ok('application.create', { name: 'api', environmentId: env });
    await ok('application.saveContainerProvider', { applicationId: app.applicationId, containerImage: 'busybox:latest', username: null, password: null, registryUrl: null });
    await ok('application.deploy', { applicationId: app.applicationId });
    await ok('application.stop', { applicationId: app.applicationId });
    now = minutes(31);
    expect(await t.platform.expireOverdueCommands()).toBe(2);
    expect((await commandsOf(app.applicationId)).map((c) => c.status)).toEqual(['failed', 'failed']);
    expect((await ok('application.one', { applicationId: app.applicationId })).applicationStatus).toBe('error');
  });
});
