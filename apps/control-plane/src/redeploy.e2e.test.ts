// Redeploys of an application behind the proxy, end to end: a steady load through the proxy
// sees no error while its tasks are swapped (a version slow to listen, and one with a health
// check); the deployment is done soon after the new version answers, not after the engine's
// old 5 s monitor period; a version that fails right after it starts ends the deployment in
// error and the previous one serves again.
import { Agent, request } from 'node:http';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from './testing/stack.js';

const SECOND = 1_000_000_000;
/** Requests a second through the proxy during the redeploys (correctness, not speed). */
const RATE = 50;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack('redeploy');
}, 120_000);
afterAll(() => s?.close(), 60_000);

const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await s.t.call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** busybox httpd serving `page` on 8080, listening only after `delay` seconds. */
const version = (page: string, delay = 0) => ({
  env: `PAGE=${page}`,
  command: 'sh',
  args: ['-c', `sleep ${delay}; mkdir -p /www && echo "$PAGE" > /www/index.html && exec httpd -f -p 8080 -h /www`],
});

interface Answer {
  at: number;
  status: number;
  body: string;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 256 });

function viaProxy(host: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: s.proxy.httpPort, path: '/', agent: keepAlive, timeout: 20_000, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ at: Date.now(), status: res.statusCode ?? 0, body: body.trim() }));
      res.on('error', (err) => resolve({ at: Date.now(), status: 0, body: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ at: Date.now(), status: 0, body: err.message }));
    req.end();
  });
}

/** A request every 1/RATE s until stopped; answers every response in the order they came. */
function steadyLoad(host: string) {
  const answers: Answer[] = [];
  const pending = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const p = viaProxy(host).then((a) => {
      answers.push(a);
      pending.delete(p);
    });
    pending.add(p);
  }, 1000 / RATE);
  return {
    answers,
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return answers;
    },
  };
}

describe('a redeploy behind the proxy', () => {
  it('serves every request during the swap, is done soon after the new version answers, and fails on a task that dies at start', async () => {
    const app = await s.containerApplication('swap', { containerImage: 'busybox:latest' });
    await ok('application.update', { applicationId: app.applicationId, ...version('v1') });
    expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
    const host = `swap-${s.run}.skiff.test`;
    await ok('domain.create', {
      host,
      path: '/',
      port: 8080,
      https: false,
      applicationId: app.applicationId,
      certificateType: 'none',
      domainType: 'application',
    });
    await waitFor(async () => (await viaProxy(host)).body === 'v1', { timeoutMs: 60_000, what: `${host} to answer v1 through the proxy` });

    const load = steadyLoad(host);
    // A version that listens 2 s after its task runs, with no health check: the engine takes
    // the old task out at once, and the proxy must wait for the new one rather than answer 502.
    await ok('application.update', { applicationId: app.applicationId, ...version('v2', 2) });
    expect((await s.deployAndWait(app.applicationId)).status).toBe('done');
    await waitFor(async () => load.answers.some((a) => a.body === 'v2'), { timeoutMs: 30_000, what: 'v2 through the proxy' });

    // A version with a health check: its task runs (and joins the service's DNS name) once healthy.
    await ok('application.update', {
      applicationId: app.applicationId,
      ...version('v3', 1),
      healthCheckCluster: { Test: ['CMD-SHELL', 'wget -q -O /dev/null http://127.0.0.1:8080/ || exit 1'], Interval: SECOND / 2, Timeout: 2 * SECOND, Retries: 5 },
    });
    const v3 = await s.deployAndWait(app.applicationId);
    expect(v3.status).toBe('done');
    await waitFor(async () => load.answers.some((a) => a.body === 'v3'), { timeoutMs: 30_000, what: 'v3 through the proxy' });
    const answers = await load.stop();

    const errors = answers.filter((a) => a.status !== 200 || !['v1', 'v2', 'v3'].includes(a.body));
    expect(errors.slice(0, 5), `${errors.length} of ${answers.length} requests failed`).toEqual([]);
    expect(answers.length).toBeGreaterThan(RATE * 3);

    // Done comes within a second or so of the first v3 answer (generous margins: the engine's
    // old 5 s monitor period put it 5 s after).
    const firstV3 = answers.find((a) => a.body === 'v3')!.at;
    const doneAt = Date.parse((v3 as unknown as { finishedAt: string }).finishedAt);
    expect(doneAt - firstV3, 'done minus first answer of v3 (ms)').toBeLessThan(3_000);
    expect(doneAt - firstV3, 'done minus first answer of v3 (ms)').toBeGreaterThan(-1_000);

    // A version that exits 0.2 s after it starts: the deployment ends in error and v3 serves again.
    await ok('application.update', { applicationId: app.applicationId, command: 'sh', args: ['-c', 'sleep 0.2; exit 3'], healthCheckCluster: null });
    const crashed = await s.deployAndWait(app.applicationId);
    expect(crashed.status, JSON.stringify(crashed)).toBe('error');
    await waitFor(async () => (await viaProxy(host)).body === 'v3', { timeoutMs: 60_000, what: 'v3 to serve again after the failed deploy' });
  }, 300_000);
});
