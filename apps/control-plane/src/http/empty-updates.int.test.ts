import { allContracts } from '@skiff/contracts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

/** `*.update`, `*.update<Something>` and `*.save*`: the operations that change a record's fields. */
const updateLike = allContracts.filter((c) => /^(update|save)/.test(c.operation));

/**
 * Every update-like operation, called on real records with only the ids it requires (nothing
 * to change), answers anything but an internal error: the record unchanged, or BAD_REQUEST
 * for a required field. An UPDATE with no columns is the 500 this guards against.
 */
it('answers no INTERNAL_SERVER_ERROR to an update with only its ids', async () => {
  expect(updateLike.map((c) => c.name)).toContain('user.update');
  const ok = async (op: string, input: Record<string, unknown>) => {
    const r = await t.call(op, input);
    if (r.status !== 200) throw new Error(`${op} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const me = (await t.call('user.get')).body;
  const ids: Record<string, string> = { organizationId: t.organizationId, userId: me.userId };
  /** Keeps the ids a created record answers with (`…Id` fields), the first of each name. */
  const keep = (body: unknown) => {
    for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (/Id$/.test(k) && typeof v === 'string' && !(k in ids)) ids[k] = v;
    return body as Record<string, any>;
  };
  const server = keep(await ok('server.create', { name: 's', address: '198.51.100.9' }));
  const project = keep(await ok('project.create', { name: 'p' }));
  ids.environmentId = project.environments[0].environmentId;
  const app = keep(await ok('application.create', { name: 'a', environmentId: ids.environmentId }));
  keep(await ok('compose.create', { name: 'c', environmentId: ids.environmentId }));
  keep(await ok('cache.create', { name: 'r', environmentId: ids.environmentId, databasePassword: 'pw' }));
  keep(await ok('domain.create', { host: 'a.example.com', applicationId: app.applicationId, port: 80 }));
  keep(await ok('security.create', { applicationId: app.applicationId, username: 'u', password: 'p' }));
  const dst = keep(await ok('destination.create', { name: 'd', endpoint: 'https://s3.example.com', region: 'eu', bucket: 'bucket-one', accessKey: 'a', secretKey: 'b' }));
  keep(await ok('backup.create', { schedule: '@daily', prefix: 'x', destinationId: dst.destinationId, database: 'db', databaseType: 'dbA', dbAId: keep(await ok('dbA.create', { name: 'pg', environmentId: ids.environmentId })).dbAId }));
  keep(await ok('ai.create', { name: 'ai', apiUrl: 'https://llm.example.com/v1', apiKey: 'sk', model: 'm', isEnabled: true }));
  keep(await ok('sshKey.generate', { name: 'k' }));
  keep(await ok('forgeD.create', { ...(allContracts.find((c) => c.name === 'forgeD.create')!.example as object), authId: me.userId }));
  for (const kind of ['Hook', 'Messenger', 'Community', 'Email', 'Push']) {
    const example = allContracts.find((c) => c.name === `notification.create${kind}`)!.example as Record<string, unknown>;
    const created = await ok(`notification.create${kind}`, example);
    // Each kind's own id (hookId, messengerId…) is in the record read back.
    const one = await ok('notification.one', { notificationId: created.notificationId ?? (await ok('notification.all', {}))[0].notificationId });
    for (const [k, v] of Object.entries(one)) if (/Id$/.test(k) && typeof v === 'string' && k !== 'notificationId' && !(k in ids)) ids[k] = v;
    ids[`notificationIdFor${kind}`] ??= one.notificationId;
  }
  expect(server.serverId).toBeTruthy();

  const problems: string[] = [];
  for (const c of updateLike) {
    const shape = (c.input as z.ZodObject).shape as Record<string, z.ZodType>;
    const input: Record<string, unknown> = {};
    for (const [field, schema] of Object.entries(shape)) {
      if (schema.isOptional() || !/Id$/.test(field)) continue;
      const kind = /^update([A-Z]\w*)$/.exec(c.operation)?.[1];
      input[field] = (field === 'notificationId' && kind && ids[`notificationIdFor${kind}`]) || ids[field] || (c.example as Record<string, unknown>)[field];
    }
    const r = await t.call(c.name, input);
    if (r.status >= 500 && r.status !== 501) problems.push(`${c.name} ${JSON.stringify(input)} -> ${r.status} ${JSON.stringify(r.body)}`);
  }
  expect(problems).toEqual([]);
}, 120_000);

it('user.update with nothing to change answers the user unchanged', async () => {
  const before = (await t.call('user.get')).body;
  const res = await t.call('user.update', {});
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect((await t.call('user.get')).body).toEqual(before);
});
