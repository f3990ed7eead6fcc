import { Writable } from 'node:stream';
import { Hono } from 'hono';
import pino, { type Logger } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Principal, defaultPermissions } from '../authz/principal.js';
import { PrincipalCache } from './authenticate.js';
import type { AllHandlers } from './context.js';
import { mountApi } from './mount.js';

const owner: Principal = { userId: 'usr_1', organizationId: 'org_1', role: 'owner', apiKeyId: 'key_1', permissions: defaultPermissions(), isPlatformAdmin: false };
const project = { projectId: 'prj_1', organizationId: 'org_1', name: 'p', description: null, env: '', createdAt: '2026-01-01T00:00:00.000Z', environments: [] };

/** The API with project.one answering `project` (or throwing `fails`), logging to `lines` at `level`. */
function api(level: string, options: { fails?: Error; logs?: boolean } = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level }, new Writable({ write: (chunk, _e, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
  const handlers = {
    project: {
      one: async (_input: unknown, ctx: { log: Logger }) => {
        if (options.fails) throw options.fails;
        if (options.logs) ctx.log.debug('inside');
        return project;
      },
    },
  } as unknown as AllHandlers;
  const app = new Hono();
  let n = 0;
  mountApi(app, { handlers, principals: new PrincipalCache(async () => owner), log, newRequestId: () => `req_${++n}` });
  const get = (path: string, method = 'GET') => app.request(`http://skiff.test/api/${path}`, { method, headers: { 'x-api-key': 'k' } });
  return { app, log, lines, get };
}

afterEach(() => vi.restoreAllMocks());

describe('the answer', () => {
  it('is JSON with the request id, its headers a plain record (no Headers object built per request)', async () => {
    const { get } = api('warn');
    const made = vi.spyOn(globalThis, 'Headers');
    const res = await get('project.one?projectId=prj_1');
    expect(made).not.toHaveBeenCalled();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toBe('req_1');
    expect(await res.json()).toEqual(project);
  });

  it('names the method an operation takes on the wrong one, with the request id', async () => {
    const res = await api('warn').get('project.one?projectId=prj_1', 'POST');
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.headers.get('x-request-id')).toBe('req_1');
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', requestId: 'req_1' });
  });

  it('keeps a request id the client sent (up to 64 characters)', async () => {
    const { app } = api('warn');
    const res = await app.request('http://skiff.test/api/project.one?projectId=prj_1', { headers: { 'x-api-key': 'k', 'x-request-id': 'r'.repeat(80) } });
    expect(res.headers.get('x-request-id')).toBe('r'.repeat(64));
  });
});

describe("the request's logger", () => {
  it('is not made for a request that logs nothing at the level', async () => {
    const { log, lines, get } = api('warn');
    const child = vi.spyOn(log, 'child');
    expect((await get('project.one?projectId=prj_1')).status).toBe(200);
    expect((await get('project.one?projectId=nope&x=1')).status).toBe(400);
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it("carries the request id and operation on the request's lines and on what the handler logs", async () => {
    const { lines, get } = api('debug', { logs: true });
    await get('project.one?projectId=prj_1');
    expect(lines.map((l) => [l.msg, l.requestId, l.operation, l.status])).toEqual([
      ['inside', 'req_1', 'project.one', undefined],
      ['request', 'req_1', 'project.one', 200],
    ]);
  });

  it('logs an internal error with the request id even at warn', async () => {
    const { lines, get } = api('warn', { fails: new Error('boom') });
    const res = await get('project.one?projectId=prj_1');
    expect(res.status).toBe(500);
    expect(lines).toMatchObject([{ msg: 'request failed', requestId: 'req_1', operation: 'project.one', status: 500, err: { message: 'boom' } }]);
  });
});
