import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

// PostgreSQL text cannot hold U+0000: such input used to reach a query and answer INTERNAL_SERVER_ERROR.
it('refuses a NUL character in an id of a GET operation with BAD_REQUEST naming the field', async () => {
  const res = await t.call('project.one', { projectId: 'prj\u0000x' });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('BAD_REQUEST');
  expect(res.body.issues).toEqual([{ path: ['projectId'], message: expect.stringContaining('NUL') }]);
});

it('refuses a NUL character anywhere in a body, naming its path, and changes nothing', async () => {
  const before = (await t.call('project.all')).body.length;
  const res = await t.call('project.create', { name: 'a\u0000b' });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.issues.map((i: { path: unknown[] }) => i.path)).toEqual([['name']]);
  expect((await t.call('project.all')).body.length).toBe(before);

  const project = (await t.call('project.create', { name: 'nul' })).body;
  const app = (await t.call('application.create', { name: 'nul', environmentId: project.environments[0].environmentId })).body;
  const env = await t.call('application.saveEnvironment', { applicationId: app.applicationId, env: 'A=1', buildArgs: 'X=\u0000', buildSecrets: null, createEnvFile: true });
  expect(env.status, JSON.stringify(env.body)).toBe(400);
  expect(env.body.issues.map((i: { path: unknown[] }) => i.path)).toEqual([['buildArgs']]);
});

it('refuses a NUL character in a deleted record id rather than failing', async () => {
  for (const [op, field] of [['domain.delete', 'domainId'], ['security.delete', 'securityId'], ['server.update', 'serverId']] as const) {
    const res = await t.call(op, { [field]: '\u0000', name: 'x', address: 'x' });
    expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(400);
  }
});

// A lone UTF-16 surrogate has no UTF-8 form: a JSON column refused it and the answer was INTERNAL_SERVER_ERROR.
it('refuses a lone surrogate with BAD_REQUEST naming the field, and keeps pairs (emoji)', async () => {
  const { contractsByName } = await import('@skiff/contracts');
  const example = contractsByName.get('notification.createHook')!.example as Record<string, unknown>;
  for (const channel of ['\uD800', 'x\uDC00y', 'a\uDBFF']) {
    const res = await t.call('notification.createHook', { ...example, webhookUrl: 'http://127.0.0.1:9/hook', channel });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['channel'], message: expect.stringContaining('surrogate') }]);
  }
  const emoji = await t.call('notification.createHook', { ...example, webhookUrl: 'http://127.0.0.1:9/hook', channel: '#😀' });
  expect(emoji.status, JSON.stringify(emoji.body)).toBe(200);
});
