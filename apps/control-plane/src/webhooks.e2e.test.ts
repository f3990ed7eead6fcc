// Push-to-deploy end to end (testing/stack.ts: API, outbox relay, NATS, the agent and the
// swarm): a git repository served over HTTP on loopback, its pushes announced to the generic
// deploy hook as a Gitea-style push delivery, built and served.
import { serve } from '@hono/node-server';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGitServer, waitFor, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBuiltImages } from './testing/built-images.js';
import { freePort, page, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
let git: TestGitServer;
let api: Server;
let base: string;
let applicationId = '';

beforeAll(async () => {
  s = await startTestStack('webhooks');
  git = await startGitServer({ auth: { username: 'deployer', password: s.t.watch.secret(`pw-${s.run}-hook`) } });
  api = serve({ fetch: s.t.platform.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await once(api, 'listening');
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => api?.close(resolve));
  const closed = await s?.close().then(() => null, (err: unknown) => err);
  await git?.stop();
  await removeBuiltImages([applicationId].filter(Boolean));
  if (closed) throw closed;
}, 90_000);

/** A Gitea push delivery of `commit` on `branch` that changed `files`. */
const pushBody = (branch: string, commit: string, files: string[]) =>
  JSON.stringify({
    ref: `refs/heads/${branch}`,
    before: '0'.repeat(40),
    after: commit,
    repository: { full_name: 'acme/site' },
    commits: [{ id: commit, message: 'change', added: [], modified: files, removed: [] }],
  });

describe('push-to-deploy from a plain git repository', () => {
  it('a push on main builds and serves the new commit; another branch and a watch-path miss deploy nothing', async () => {
    const { t } = s;
    const repo = await git.createRepo(`hooked-${s.run}`, {
      'site/Dockerfile': 'FROM busybox:latest\nCOPY page.txt /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n',
      'site/page.txt': 'first push\n',
      'README.md': 'notes\n',
    });
    const port = await freePort();
    const app = (await t.call('application.create', { name: 'hooked', appName: `hooked-${s.run}`, environmentId: s.environmentId, sourceType: 'git' })).body;
    applicationId = app.applicationId;
    s.services.push(app.appName);
    for (const [op, input] of [
      ['application.saveGitProvider', { customGitUrl: repo.authUrl, customGitBranch: 'main', customGitBuildPath: 'site', watchPaths: ['site/**'] }],
      ['application.saveBuildType', { buildType: 'containerfile', containerfile: 'Dockerfile', containerContextPath: '.', containerBuildStage: null, legacyVersion: null, packTwoVersion: null }],
      ['application.update', { endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] } }],
    ] as const) {
      const res = await t.call(op, { applicationId, ...input });
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const token = (await t.call('application.refreshToken', { applicationId })).body.refreshToken as string;
    t.watch.secret(token);
    const hook = (await t.call('application.webhookDeliveries', { applicationId })).body.webhookPath as string;

    const deliver = async (body: string, delivery: string) => {
      const started = performance.now();
      const res = await fetch(`${base}${hook}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-gitea-event': 'push', 'x-gitea-delivery': delivery }, body });
      const answer = (await res.json()) as { results: { decision: string; reason: string; deploymentId: string | null }[] };
      expect(res.status, JSON.stringify(answer)).toBe(200);
      // The hook only queues: it answers long before the clone and build finish.
      expect(performance.now() - started).toBeLessThan(1000);
      return answer.results[0]!;
    };
    const ended = (deploymentId: string) =>
      waitFor(
        async () => {
          const all = (await t.call('deployment.all', { applicationId })).body as { deploymentId: string; status: string }[];
          const d = all.find((x) => x.deploymentId === deploymentId);
          return d && ['done', 'error', 'cancelled'].includes(d.status) ? d.status : null;
        },
        { timeoutMs: 180_000, intervalMs: 250, what: () => `deployment ${deploymentId} to end (agent: ${s.agentOutput().slice(-1500)})` },
      );

    const first = await deliver(pushBody('main', 'a'.repeat(40), ['site/page.txt']), `d1-${s.run}`);
    expect(first).toMatchObject({ decision: 'deployed', reason: 'deployed: push to main changed site/page.txt' });
    expect(await ended(first.deploymentId!)).toBe('done');
    await waitFor(async () => (await page(port)) === 'first push', { timeoutMs: 30_000, what: 'the first push to be served' });

    const second = await repo.commit({ 'site/page.txt': 'second push\n' });
    const redeployed = await deliver(pushBody('main', second, ['site/page.txt']), `d2-${s.run}`);
    expect(redeployed.decision).toBe('deployed');
    expect(await ended(redeployed.deploymentId!)).toBe('done');
    await waitFor(async () => (await page(port)) === 'second push', { timeoutMs: 30_000, what: 'the second push to be served' });

    const other = await deliver(pushBody('dev', 'b'.repeat(40), ['site/page.txt']), `d3-${s.run}`);
    expect(other).toMatchObject({ decision: 'ignored', reason: 'ignored: branch dev is not main' });
    const docs = await deliver(pushBody('main', 'c'.repeat(40), ['README.md']), `d4-${s.run}`);
    expect(docs).toMatchObject({ decision: 'ignored', reason: 'ignored: no changed file matches the watch paths (site/**)' });
    expect(((await t.call('deployment.all', { applicationId })).body as unknown[]).length).toBe(2);
    const seen = (await t.call('application.webhookDeliveries', { applicationId })).body.deliveries as { decision: string }[];
    expect(seen.map((d) => d.decision)).toEqual(['ignored', 'ignored', 'deployed', 'deployed']);
  }, 400_000);
});
