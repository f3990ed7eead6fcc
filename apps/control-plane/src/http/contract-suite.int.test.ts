import { readFileSync } from 'node:fs';
import { allContracts, contractsByName } from '@skiff/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestPlatform, startTestPlatform } from '../testing/harness.js';
import { violationsOf } from '../testing/violations.js';

// The spec's operations, kept in the repository (tools/check-spec.ts compares it with the document).
const specList = new URL('../../../../libs/contracts/spec-operations.txt', import.meta.url);

/** Every `METHOD router.operation` the spec lists. */
function specOperations(): { method: string; name: string }[] {
  return readFileSync(specList, 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [method, name] = line.split(' ');
      return { method: method!, name: name! };
    });
}

/**
 * GET operations that look nothing up: ai.getModels calls the URL it is given; the container
 * listings by app name ask the server's agent (none runs here). Tested with their services.
 */
const READS_NO_RECORD = new Set([
  'ai.getModels',
  'container.getContainersByAppNameMatch',
  'container.getContainersByAppLabel',
  'container.getStackContainersByAppName',
  'container.getServiceContainersByAppName',
]);

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform();
});
afterAll(() => t?.close());

describe('the registry against the spec', () => {
  const listed = specOperations();

  it('finds the spec and lists its operations', () => {
    expect(listed.length).toBeGreaterThan(200);
  });

  it('has a contract, with the spec method, for every listed operation', () => {
    const missing = listed.filter((o) => contractsByName.get(o.name)?.method !== o.method);
    expect(missing).toEqual([]);
  });

  it('has every example valid for its own contract', () => {
    const bad = allContracts.filter((c) => !c.input.safeParse(c.example).success).map((c) => c.name);
    expect(bad).toEqual([]);
  });
});

describe.each(allContracts.map((c) => [c.name, c] as const))('%s', (name, c) => {
  it('answers UNAUTHORIZED without a key', async () => {
    const res = await t.call(name, c.example as Record<string, unknown>, { key: null });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'UNAUTHORIZED', issues: [] });
    expect(typeof res.body.requestId).toBe('string');
  });

  it('answers NOT_FOUND to the wrong method', async () => {
    const res = await t.call(name, {}, { method: c.method === 'GET' ? 'POST' : 'GET' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  const violations = violationsOf(c);
  if (violations.length) {
    it.each(violations.map((v) => [`${v.field} (${v.why})`, v] as const))('refuses %s with BAD_REQUEST naming the field', async (_label, v) => {
      const res = await t.call(name, v.input);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
      expect(res.body.issues.map((i: { path: unknown[] }) => i.path[0])).toContain(v.field);
    });
  }

  if (c.method === 'GET' && !READS_NO_RECORD.has(name) && Object.values(c.example as object).some((v) => typeof v === 'string')) {
    it('answers NOT_FOUND (or NOT_IMPLEMENTED until built) for unknown ids', async () => {
      const res = await t.call(name, c.example as Record<string, unknown>);
      expect([404, 501], JSON.stringify(res.body)).toContain(res.status);
      expect(res.body.code).toBe(res.status === 404 ? 'NOT_FOUND' : 'NOT_IMPLEMENTED');
    });
  }
});

describe('the generic mount', () => {
  it('answers NOT_FOUND for an unknown operation, even with a key', async () => {
    const res = await t.call('project.nothing', {}, { method: 'POST' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  });

  it('refuses a body that is not JSON, or not an object', async () => {
    for (const rawBody of ['{name:', '[1,2]', '"text"']) {
      const res = await t.call('project.create', {}, { rawBody });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
  });

  it('answers NOT_FOUND for a forge connection that does not exist (the forge operations are built)', async () => {
    const res = await t.call('forgeB.testConnection', { forgeBId: 'fgb_example' });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', message: 'No such forgeB (GitLab) connection' });
  });

  it('refuses unknown fields naming them, and parses query values strictly', async () => {
    const refused = await t.call('project.create', { name: 'strict', surprise: true });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([{ path: ['surprise'], message: expect.stringContaining('unknown field') }]);
    const created = await t.call('project.create', { name: 'strict' });
    expect(created.status).toBe(200);
    const res = await t.call('project.one', { projectId: created.body.projectId, extra: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.issues.map((i: { path: string[] }) => i.path)).toEqual([['extra']]);
    expect((await t.call('project.one', { projectId: created.body.projectId })).body.name).toBe('strict');
  });

  it('accepts Authorization: Bearer as well as x-api-key', async () => {
    const res = await t.platform.app.request('http://skiff.test/api/project.all', {
      headers: { authorization: `Bearer ${t.ownerKey}` },
    });
    expect(res.status).toBe(200);
  });

  it('refuses an unknown key', async () => {
    const res = await t.call('project.all', {}, { key: 'skf_not-a-real-key' });
    expect(res.status).toBe(401);
  });

  it('serves /health without a key and the OpenAPI document at both addresses', async () => {
    expect((await t.platform.app.request('http://skiff.test/health')).status).toBe(200);
    const doc = (await (await t.platform.app.request('http://skiff.test/api/openapi.json')).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toHaveLength(allContracts.length);
    const viaOp = await t.call('settings.getOpenApiDocument', {});
    expect(viaOp.body).toEqual(doc);
  });
});
