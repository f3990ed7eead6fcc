// The public push-to-deploy routes against hostile callers, over real HTTP on loopback and real
// Postgres: every answer is the error envelope with a 4xx (never a 5xx), nothing is recorded or
// queued, and a body that never ends is cut at the deadline instead of holding the request.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureFor } from '../services/webhooks/index.js';
import { startTestPlatform, type TestPlatform } from '../testing/harness.js';
import { listen as listenApp } from './serve.js';
import { MAX_PUSH_WEBHOOK_BYTES, mountWebhooks } from './webhooks.js';

let t: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let app: { applicationId: string; token: string };

const listen = async (fetchFn: (r: Request) => Response | Promise<Response>) => {
  const s = serve({ fetch: fetchFn, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => (s.listening ? resolve() : s.once('listening', () => resolve())));
  return { server: s, port: (s.address() as AddressInfo).port };
};

beforeAll(async () => {
  t = await startTestPlatform();
  // The production listener (serve.ts): the HTTP parser's refusals are in the envelope too.
  server = listenApp(t.platform.app, { port: 0, hostname: '127.0.0.1', log: pino({ level: 'silent' }) });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env = (await t.call('project.create', { name: 'hostile-hooks' })).body.environments[0].environmentId;
  const created = (await t.call('application.create', { name: 'hooked', environmentId: env })).body;
  await t.call('application.refreshToken', { applicationId: created.applicationId });
  const token = (await t.db.selectFrom('applications').select('refreshToken').where('id', '=', created.applicationId).executeTakeFirstOrThrow()).refreshToken!;
  app = { applicationId: created.applicationId, token: t.watch.secret(t.platform.secrets.open(token)) };
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
});

const recorded = async () => ({
  deliveries: (await t.db.selectFrom('webhookDeliveries').select('id').execute()).length,
  seen: (await t.db.selectFrom('webhookSeen').selectAll().execute()).length,
  deployments: (await t.db.selectFrom('deployments').select('id').execute()).length,
});

/** A 4xx in the envelope. */
async function refused(res: Response, status?: number) {
  const text = await res.text();
  expect(res.status, text).toBeGreaterThanOrEqual(400);
  expect(res.status, text).toBeLessThan(500);
  if (status) expect(res.status, text).toBe(status);
  const body = JSON.parse(text);
  expect(body).toMatchObject({ code: expect.any(String), message: expect.any(String), issues: expect.any(Array) });
  return body;
}

describe('push-to-deploy routes against hostile input', () => {
  it('refuses malformed, unsigned, mis-signed and oddly typed deliveries without recording anything', async () => {
    const before = await recorded();
    const push = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40), repository: { full_name: 'acme/site' }, commits: [] });
    const cases: Array<[string, RequestInit]> = [
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push' }, body: '{"ref": ' }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push' }, body: push }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push', 'x-gitea-signature': 'zz' }, body: push }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push', 'x-gitea-signature': signatureFor('gitea', 'another-secret', push) }, body: push }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'text/plain', 'x-gitea-event': 'push', 'x-gitea-signature': signatureFor('gitea', 'x', push) }, body: push }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-gitea-event': 'push' }, body: 'payload=%7B%7D' }],
      ['/webhooks/gitlab', { method: 'POST', headers: { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': '' }, body: push }],
      ['/webhooks/bitbucket', { method: 'POST', headers: { 'x-event-key': 'repo:push', 'x-hub-signature': 'sha256=' }, body: '[]' }],
      ['/webhooks/github', { method: 'POST', headers: { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00' }, body: 'null' }],
      ['/webhooks/github', { method: 'POST', headers: { 'x-github-event': 'push' }, body: '"\u0000"' }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'x-gitea-event': 'push', 'x-gitea-signature': 'a'.repeat(8000) }, body: '{"repository": {"full_name": 5}}' }],
      ['/webhooks/gitea', { method: 'POST', headers: { 'x-gitea-event': 'push' }, body: '' }],
      [`/webhooks/deploy/application/${app.applicationId}/wrong-token`, { method: 'POST', body: '{}' }],
      [`/webhooks/deploy/application/${'x'.repeat(3000)}/${app.token}`, { method: 'POST', body: '{}' }],
      [`/webhooks/deploy/application/%00/${app.token}`, { method: 'POST', body: '{}' }],
      [`/webhooks/deploy/compose/${app.applicationId}/${app.token}`, { method: 'POST', body: '{}' }],
    ];
    for (const [path, init] of cases) await refused(await fetch(`${base}${path}`, init));
    // Headers over Node's limit: the envelope, from the HTTP parser's refusal.
    await refused(await fetch(`${base}/webhooks/gitea`, { method: 'POST', headers: { 'x-gitea-event': 'push', 'x-huge': 'h'.repeat(20_000) }, body: push }), 400);
    expect(await recorded()).toEqual(before);
  });

  it('a valid token with a body that is not JSON, not an object, or of another shape decides nothing and never fails', async () => {
    for (const body of ['{"ref": "refs/heads/ma\\u0000in", "after": "\\ud800", "head_commit": {"id": "\\udc00\\u0000"}}', '{"ref": ', '[]', '"text"', '{"ref": 5, "after": {}, "repository": []}', '{"ref": "refs/heads/' + 'x'.repeat(5000) + '"}']) {
      const res = await fetch(`${base}/webhooks/deploy/application/${app.applicationId}/${app.token}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body });
      expect(res.status, await res.clone().text()).toBeLessThan(500);
    }
    const records = (await t.call('application.webhookDeliveries', { applicationId: app.applicationId })).body.deliveries;
    expect(records.map((d: { ref: string | null }) => d.ref), JSON.stringify(records)).toContain('main');
  });

  it('refuses a body of 1 MiB + 1 byte, declared or chunked, and reads no further', async () => {
    const before = await recorded();
    const big = 'x'.repeat(MAX_PUSH_WEBHOOK_BYTES + 1);
    await refused(await fetch(`${base}/webhooks/gitea`, { method: 'POST', headers: { 'x-gitea-event': 'push' }, body: big }), 413);
    const chunked = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(big));
        c.close();
      },
    });
    await refused(await fetch(`${base}/webhooks/deploy/application/${app.applicationId}/${app.token}`, { method: 'POST', body: chunked, duplex: 'half' } as RequestInit), 413);
    expect(await recorded()).toEqual(before);
  });
});

describe('a body that never ends', () => {
  it('is cut at the deadline with the envelope (the receiver is never called)', async () => {
    let called = 0;
    const hono = new Hono();
    const receive = async () => {
      called++;
      return { results: [] };
    };
    mountWebhooks(hono, { billing: async () => ({}), push: { forge: receive, generic: receive } }, { log: pino({ level: 'silent' }), newRequestId: () => 'req_test', bodyDeadlineMs: 300 });
    const { server: slow, port } = await listen(hono.fetch);
    try {
      for (const path of ['/webhooks/gitea', '/webhooks/deploy/application/app_x/token', '/webhooks/billing']) {
        const started = performance.now();
        const answer = await new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"ref":`);
          });
          let text = '';
          socket.on('data', (d) => (text += d.toString()));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
          setTimeout(() => {
            socket.destroy();
            resolve(text);
          }, 5_000);
        });
        expect(performance.now() - started, path).toBeLessThan(3_000);
        expect(answer, path).toMatch(/^HTTP\/1.1 400/);
        expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/within/) });
      }
      expect(called).toBe(0);
    } finally {
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});
