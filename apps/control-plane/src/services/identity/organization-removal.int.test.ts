import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

const TABLES = ['servers', 'sshKeys', 'destinations', 'notifications', 'aiConfigs', 'gitProviders', 'backups', 'domains', 'projects'] as const;

const countOf = async (organizationId: string) => {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const q = t.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).where('organizationId', '=', organizationId);
    counts[table] = Number((await q.executeTakeFirstOrThrow()).n);
  }
  return counts;
};

describe('removing an organization', () => {
  it('removes every record it holds, servers with services on them included, and leaves the others alone', async () => {
    const org = (await t.call('organization.create', { name: 'Short-lived' })).body;
    const key = (await t.call('user.createApiKey', { name: 'k', metadata: { organizationId: org.organizationId } })).body.key;
    const call = t.as(key);
    const ok = async (op: string, input: Record<string, unknown>) => {
      const res = await call(op, input);
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body;
    };
    const server = await ok('server.create', { name: 'edge', address: '198.51.100.4' });
    const project = await ok('project.create', { name: 'p' });
    const env = project.environments[0].environmentId;
    const app = await ok('application.create', { name: 'web', environmentId: env, serverId: server.serverId });
    await ok('domain.create', { host: 'gone.example.com', applicationId: app.applicationId, port: 80 });
    const destination = await ok('destination.create', { name: 'd', endpoint: 'https://s3.example.com', region: 'eu', bucket: 'gone-bucket', accessKey: 'a', secretKey: 'b' });
    await ok('backup.create', { schedule: '@daily', prefix: 'x', destinationId: destination.destinationId, database: 'db', databaseType: 'dbA', dbAId: (await ok('dbA.create', { name: 'pg', environmentId: env, serverId: server.serverId })).dbAId });
    await ok('sshKey.generate', { name: 'k' });
    await ok('ai.create', { name: 'ai', apiUrl: 'https://llm.example.com/v1', apiKey: 'sk', model: 'm', isEnabled: true });
    await ok('notification.createPush', {
      name: 'n', serverUrl: 'https://push.example.com', appToken: 't', priority: 5, decoration: false,
      appBuildError: true, databaseBackup: false, platformBackup: false, volumeBackup: false, platformRestart: false, appDeploy: false, containerCleanup: false, serverThreshold: false,
    });
    const me = (await call('user.get')).body;
    await ok('forgeC.create', { name: 'bb', authId: me.userId, forgeCUsername: 'acme', apiToken: 'tok' });
    const held = await countOf(org.organizationId);
    expect(Object.entries(held).filter(([, n]) => n === 0)).toEqual([]);
    const before = await countOf(t.organizationId);

    expect((await t.call('organization.delete', { organizationId: org.organizationId })).status).toBe(200);
    expect(Object.values(await countOf(org.organizationId)).every((n) => n === 0)).toBe(true);
    expect(await countOf(t.organizationId)).toEqual(before);
    expect((await t.db.selectFrom('applications').select('id').where('id', '=', app.applicationId).execute()).length).toBe(0);
  });
});
