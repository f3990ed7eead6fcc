// A domain, end to end: an application deployed through the API, a domain (and basic auth) on
// it, and requests with its Host header through the server's reverse proxy (skiff-proxy:
// Caddy, run by the agent; testing/stack.ts gives each stack its own proxy container and
// ports). The proxy is removed mid-test and must come back serving on its own.
import { request } from 'node:http';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docker, freePort, startTestStack, webServerSettings, type TestStack } from './testing/stack.js';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack('proxy');
}, 120_000);
afterAll(() => s?.close(), 60_000);

/** One request through the proxy's HTTP port with `host`; a fresh connection each time (a config load closes kept-alive ones). */
function viaProxy(host: string, path = '/', auth?: string): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: s.proxy.httpPort,
        path,
        agent: false,
        timeout: 3_000,
        headers: { host, ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: body.trim() }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

const answers = (host: string, status: number, body?: string, auth?: string) => async () => {
  const res = await viaProxy(host, '/', auth);
  return res !== null && res.status === status && (body === undefined || res.body === body);
};

describe('a domain through the reverse proxy', () => {
  it('routes its host to the application, puts basic auth in front of it, survives the proxy container being removed, and stops routing when deleted', async () => {
    const { t } = s;
    const app = await s.containerApplication('site', { containerImage: 'busybox:latest' });
    const updated = await t.call('application.update', { applicationId: app.applicationId, ...webServerSettings('hello through the proxy', await freePort()) });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((await s.deployAndWait(app.applicationId)).status).toBe('done');

    const host = `site-${s.run}.skiff.test`;
    const domain = await t.call('domain.create', {
      host,
      path: '/',
      port: 8080,
      https: false,
      applicationId: app.applicationId,
      certificateType: 'none',
      domainType: 'application',
    });
    expect(domain.status, JSON.stringify(domain.body)).toBe(200);
    await waitFor(answers(host, 200, 'hello through the proxy'), { timeoutMs: 60_000, what: `${host} to answer through the proxy` });
    // Another host is not routed.
    expect((await viaProxy(`other-${s.run}.skiff.test`))?.status).toBe(404);

    const entry = await t.call('security.create', { applicationId: app.applicationId, username: 'admin', password: 'correct-horse-battery' });
    expect(entry.status, JSON.stringify(entry.body)).toBe(200);
    await waitFor(answers(host, 401), { timeoutMs: 30_000, what: 'basic auth in front of the application' });
    expect((await viaProxy(host, '/', 'admin:wrong'))?.status).toBe(401);
    expect(await viaProxy(host, '/', 'admin:correct-horse-battery')).toEqual({ status: 200, body: 'hello through the proxy' });

    // The proxy container goes away: the agent brings it back with the last good config.
    expect((await docker(['rm', '-f', s.proxy.container])).ok).toBe(true);
    await waitFor(answers(host, 200, 'hello through the proxy', 'admin:correct-horse-battery'), {
      timeoutMs: 30_000,
      what: () => `the proxy to come back serving the route (agent: ${s.agentOutput().slice(-3000)})`,
    });

    expect((await t.call('domain.delete', { domainId: domain.body.domainId })).status).toBe(200);
    await waitFor(answers(host, 404, undefined, 'admin:correct-horse-battery'), { timeoutMs: 30_000, what: `${host} to stop being routed` });
  }, 240_000);
});
