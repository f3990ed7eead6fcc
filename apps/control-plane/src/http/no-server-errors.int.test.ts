import { allContracts } from '@skiff/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

/**
 * Every POST operation, called on real records with its example input and then with each
 * nullable field set to null, answers anything but an internal error. Removals are left out
 * so that the records stay for the operations after them.
 */
it('answers no INTERNAL_SERVER_ERROR to valid input, null fields included', async () => {
  const ok = async (op: string, input: Record<string, unknown>) => {
    const r = await t.call(op, input);
    if (r.status !== 200) throw new Error(`${op} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const me = (await t.call('user.get')).body;
  const server = await ok('server.create', { name: 's', address: '198.51.100.9' });
  const project = await ok('project.create', { name: 'p' });
  const env = project.environments[0].environmentId;
  const env2 = (await ok('environment.create', { projectId: project.projectId, name: 'two' })).environmentId;
  const app = await ok('application.create', { name: 'a', environmentId: env });
  const cmp = await ok('compose.create', { name: 'c', environmentId: env });
  const cache = await ok('cache.create', { name: 'r', environmentId: env, databasePassword: 'pw' });
  const dom = await ok('domain.create', { host: 'a.example.com', applicationId: app.applicationId, port: 80 });
  const sec = await ok('security.create', { applicationId: app.applicationId, username: 'u', password: 'p' });
  const dst = await ok('destination.create', { name: 'd', endpoint: 'https://s3.example.com', region: 'eu', bucket: 'bucket-one', accessKey: 'a', secretKey: 'b' });
  const bkp = await ok('backup.create', { schedule: '@daily', prefix: 'x', destinationId: dst.destinationId, database: 'db', databaseType: 'dbA', dbAId: (await ok('dbA.create', { name: 'pg', environmentId: env })).dbAId });
  const ai = await ok('ai.create', { name: 'ai', apiUrl: 'https://llm.example.com/v1', apiKey: 'sk', model: 'm', isEnabled: true });
  const key = await ok('sshKey.generate', { name: 'k' });
  const ids: Record<string, string> = {
    applicationId: app.applicationId, composeId: cmp.composeId, cacheId: cache.cacheId, domainId: dom.domainId, securityId: sec.securityId,
    destinationId: dst.destinationId, backupId: bkp.backupId, aiId: ai.aiId, sshKeyId: key.sshKeyId, serverId: server.serverId,
    environmentId: env, targetEnvironmentId: env2, projectId: project.projectId, organizationId: t.organizationId, userId: me.userId,
    appName: app.appName, authId: me.userId, id: me.userId,
  };
  const problems: string[] = [];
  for (const c of allContracts) {
    if (c.method !== 'POST') continue;
    if (/delete|remove|Delete|Remove/.test(c.operation)) continue;
    const base: Record<string, unknown> = { ...(c.example as Record<string, unknown>) };
    for (const k of Object.keys(base)) if (k in ids && typeof base[k] === 'string') base[k] = ids[k];
    const shape = (c.input as z.ZodObject).shape as Record<string, z.ZodType>;
    const variants: Record<string, unknown>[] = [base];
    for (const [field, schema] of Object.entries(shape)) {
      if (schema.safeParse(null).success && field !== 'applicationId' && !(field in ids)) variants.push({ ...base, [field]: null });
    }
    for (const v of variants) {
      const r = await t.call(c.name, v);
      if (r.status >= 500 && r.status !== 501) problems.push(`${c.name} ${JSON.stringify(v)} -> ${r.status}`);
    }
  }
  expect(problems).toEqual([]);
}, 120_000);
