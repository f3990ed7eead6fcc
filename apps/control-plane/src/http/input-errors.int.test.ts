// What a client that gets an input wrong is told: unknown fields named (never silently
// dropped), a missing field `required`, a nullable one that null means none, a wrong method
// which method the operation takes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';

let t: TestPlatform;
let applicationId: string;
beforeAll(async () => {
  t = await startTestPlatform();
  const project = (await t.call('project.create', { name: 'input' })).body;
  applicationId = (await t.call('application.create', { name: 'web', environmentId: project.environments[0].environmentId })).body.applicationId;
});
afterAll(() => t?.close());

const issuesOf = (body: { issues: Array<{ path: unknown[]; message: string }> }) => body.issues.map((i) => [i.path.join('.'), i.message]);

describe('unknown fields', () => {
  it('refuses a typo naming it, and changes nothing', async () => {
    const before = (await t.call('application.one', { applicationId })).body;
    const res = await t.call('application.update', { applicationId, replica: 3, description: 'changed' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.message).toContain('replica');
    expect(issuesOf(res.body)).toEqual([['replica', expect.stringContaining('unknown field')]]);
    expect((await t.call('application.one', { applicationId })).body).toEqual(before);
  });

  it('names unknown fields inside objects, and together with the other problems', async () => {
    const nested = await t.call('user.createApiKey', { name: 'ci', scope: { readOnly: true, projectIdz: ['x'] } });
    expect(nested.status).toBe(400);
    expect(issuesOf(nested.body)).toEqual([['scope.projectIdz', expect.stringContaining('unknown field')]]);

    const both = await t.call('project.create', { nmae: 'typo' });
    expect(both.status).toBe(400);
    expect(issuesOf(both.body)).toEqual(expect.arrayContaining([['name', 'required'], ['nmae', expect.stringContaining('unknown field')]]));
  });

  it('refuses an operation that takes nothing a field, and a GET an unknown query parameter', async () => {
    const none = await t.call('project.all', {}, { method: 'GET' });
    expect(none.status).toBe(200);
    const query = await t.call('application.one', { applicationId, verbose: 'true' });
    expect(query.status).toBe(400);
    expect(issuesOf(query.body)).toEqual([['verbose', expect.stringContaining('unknown field')]]);
  });

  it('takes any key in a map (env-like records)', async () => {
    const res = await t.call('application.update', { applicationId, labelsCluster: { 'com.example.team': 'web', anyKey: 'x' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});

describe('missing fields and methods', () => {
  it('says required, and that null means none when the field may be null', async () => {
    const res = await t.call('application.saveContainerProvider', { applicationId, containerImage: 'busybox:latest', password: null, registryUrl: null });
    expect(res.status).toBe(400);
    expect(issuesOf(res.body)).toEqual([['username', 'required (send null for none)']]);
  });

  it('says how to send an amount the API takes as text when it comes as a number', async () => {
    const res = await t.call('application.update', { applicationId, memoryLimit: 536870912 });
    expect(res.status).toBe(400);
    expect(issuesOf(res.body)).toEqual([['memoryLimit', 'send the amount as text, e.g. "536870912"']]);
    expect((await t.call('application.update', { applicationId, memoryLimit: '536870912' })).status).toBe(200);
  });

  it('says which method an operation takes', async () => {
    const res = await t.call('project.create', {}, { method: 'GET' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(res.body.message).toContain('project.create takes POST');
  });
});

describe('deep input', () => {
  it('answers a deeply nested value in a recursive field without a server error', async () => {
    const n = 100_000;
    const deep = `${'{"a":'.repeat(n)}"leaf"${'}'.repeat(n)}`;
    const res = await t.call('backup.update', {}, { rawBody: `{"backupId":"bkp_missing","metadata":${deep}}` });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['metadata'], message: 'nested more than 64 levels deep' }]);
  });
});
