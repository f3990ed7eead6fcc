import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from './testing/harness.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform({ database: 'pglite' });
}, 120_000);
afterAll(() => t?.close());

it('runs on the embedded PGlite database', async () => {
  expect(t.platform.database.kind).toBe('pglite');
  const p = await t.call('project.create', { name: 'embedded', env: 'E=1' });
  expect(p.status).toBe(200);
  const env = await t.call('environment.create', { projectId: p.body.projectId, name: 'staging' });
  expect(env.status).toBe(200);
  const dup = await t.call('environment.create', { projectId: p.body.projectId, name: 'staging' });
  expect(dup.status).toBe(400);
  const one = await t.call('project.one', { projectId: p.body.projectId });
  expect(one.body.environments.map((e: { name: string }) => e.name)).toEqual(['production', 'staging']);
  expect(one.body.env).toBe('E=1');
  const copy = await t.call('project.duplicate', { sourceEnvironmentId: env.body.environmentId, name: 'copy' });
  expect(copy.status).toBe(200);
  expect((await t.call('project.remove', { projectId: p.body.projectId })).body.removed.environments).toBe(2);
});
