// Preview deployments end to end (testing/stack.ts: API, relay, NATS, the agent, the swarm and
// this stack's Caddy): a Gitea connection against the fake Gitea API (testing/fake-forges.ts),
// a real git server that clones only with the connection's token, and pull request deliveries
// signed as Gitea signs them. Opened: the preview is built from the pull request's branch and
// served through the proxy at its wildcard domain; updated: rebuilt with the new content;
// closed: its service and its route are gone.
import { serve } from '@hono/node-server';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGitServer, waitFor, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeForges, startFakeForges } from './testing/fake-forges.js';
import { answers, type ProxyRequest } from './testing/proxy-client.js';
import { removeBuiltImages } from './testing/built-images.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';
import { signatureFor } from './services/webhooks/index.js';

let s: TestStack;
let git: TestGitServer;
let forges: FakeForges;
let api: Server;
let base: string;
let applicationId = '';
const previewIds: string[] = [];
const token = `gitea-${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  s = await startTestStack('previews');
  s.t.watch.secret(token);
  // Gitea's clone login: user oauth2, the connection's token as password.
  git = await startGitServer({ auth: { username: 'oauth2', password: token } });
  forges = await startFakeForges({
    github: { appId: 1, installationId: '1', publicKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey },
    gitlab: { accessToken: 'unused-a', refreshToken: 'unused-r', clientId: 'c', clientSecret: 'unused-s' },
    bitbucket: { username: 'u', appPassword: 'unused-p' },
    gitea: { token },
    cloneUrls: { github: '', gitlab: '', bitbucket: '', gitea: '' },
  });
  api = serve({ fetch: s.t.platform.app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
  await once(api, 'listening');
  base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => api?.close(resolve));
  const closed = await s?.close().then(() => null, (err: unknown) => err);
  await forges?.stop();
  await git?.stop();
  await removeBuiltImages([applicationId, ...previewIds].filter(Boolean));
  if (closed) throw closed;
}, 90_000);

/** Gitea's `pull_request` delivery for pull request #1 of acme/shop at `commit` of `branch`. */
const pullRequest = (action: string, branch: string, commit: string) =>
  JSON.stringify({
    action,
    number: 1,
    pull_request: {
      id: 77001, number: 1, title: 'Preview me', html_url: 'http://gitea.test/acme/shop/pulls/1', state: action === 'closed' ? 'closed' : 'open',
      head: { ref: branch, sha: commit, repo: { full_name: 'acme/shop' } }, base: { ref: 'main', repo: { full_name: 'acme/shop' } },
      user: { login: 'alice' }, labels: [],
    },
    repository: { full_name: 'acme/shop' },
  });

describe('preview deployments', () => {
  it('a pull request opened is served at its wildcard domain through the proxy; updated, rebuilt; closed, removed', async () => {
    const { t } = s;
    const repo = await git.createRepo(`previews-${s.run}`, {
      Dockerfile: 'FROM busybox:latest\nCOPY page.txt /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n',
      'page.txt': 'main branch\n',
    });
    const first = await repo.commit({ 'page.txt': 'preview one\n' }, { branch: 'feature' });
    forges.cloneUrls.gitea = repo.url;

    const ownerId = (await t.call('user.get')).body.userId;
    const connection = await t.call('forgeD.create', { name: `gitea-${s.run}`, authId: ownerId, forgeDUrl: `${forges.baseUrl}/gt`, accessToken: token });
    expect(connection.status, JSON.stringify(connection.body)).toBe(200);
    const created = await t.call('application.create', { name: 'previewed', appName: `previewed-${s.run}`, environmentId: s.environmentId, sourceType: 'forgeD' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    applicationId = created.body.applicationId;
    const wildcard = `*.pv-${s.run}.test`;
    for (const [op, input] of [
      ['application.saveForgeDProvider', { forgeDOwner: 'acme', forgeDRepository: 'shop', forgeDBranch: 'main', forgeDBuildPath: '/', forgeDId: connection.body.forgeDId }],
      ['application.saveBuildType', { buildType: 'containerfile', containerfile: 'Dockerfile', containerContextPath: '.', containerBuildStage: null, legacyVersion: null, packTwoVersion: null }],
      ['application.update', { isPreviewDeploymentsActive: true, previewWildcard: wildcard, previewPort: 8080 }],
    ] as const) {
      const res = await t.call(op, { applicationId, ...input });
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    const hookSecret = (await t.call('application.refreshToken', { applicationId })).body.refreshToken as string;
    t.watch.secret(hookSecret);

    const deliver = async (action: string, commit: string) => {
      const body = pullRequest(action, 'feature', commit);
      const started = performance.now();
      const res = await fetch(`${base}/webhooks/gitea`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gitea-event': 'pull_request', 'x-gitea-delivery': `${action}-${commit}`, 'x-gitea-signature': signatureFor('gitea', hookSecret, body) },
        body,
      });
      const answer = (await res.json()) as { results: { decision: string; reason: string; deploymentId: string | null }[] };
      expect(res.status, JSON.stringify(answer)).toBe(200);
      expect(performance.now() - started).toBeLessThan(1000);
      return answer.results[0]!;
    };
    const preview = async () => ((await t.call('previewDeployment.all', { applicationId })).body as any[])[0];
    const ended = (deploymentId: string) =>
      waitFor(
        async () => {
          const d = (await preview())?.deployments.find((x: any) => x.deploymentId === deploymentId);
          return d && ['done', 'error', 'cancelled'].includes(d.status) ? d.status : null;
        },
        { timeoutMs: 240_000, intervalMs: 500, what: () => `preview deployment ${deploymentId} to end (agent: ${s.agentOutput().slice(-1500)})` },
      );

    const opened = await deliver('opened', first);
    expect(opened.decision, opened.reason).toBe('preview');
    const p = await preview();
    previewIds.push(p.previewDeploymentId);
    s.services.push(p.appName);
    const host = `${p.appName}.pv-${s.run}.test`.toLowerCase();
    expect(p.domains).toEqual([expect.objectContaining({ host, port: 8080 })]);
    const status = await ended(opened.deploymentId!);
    expect(status, (await t.call('deployment.readLogs', { deploymentId: opened.deploymentId })).body.log?.slice(-2000)).toBe('done');
    expect((await preview()).previewStatus).toBe('done');
    const http: ProxyRequest = { port: s.proxy.httpPort, host };
    await waitFor(answers(http, 200, 'preview one'), { timeoutMs: 60_000, what: () => `${host} to serve the preview (agent: ${s.agentOutput().slice(-4000)})` });
    // The parent was never deployed.
    expect((await t.call('application.one', { applicationId })).body.applicationStatus).toBe('idle');

    const second = await repo.commit({ 'page.txt': 'preview two\n' }, { branch: 'feature' });
    const updated = await deliver('synchronized', second);
    expect(updated.decision).toBe('preview');
    expect(await ended(updated.deploymentId!)).toBe('done');
    await waitFor(answers(http, 200, 'preview two'), { timeoutMs: 60_000, what: () => `${host} to serve the new content (agent: ${s.agentOutput().slice(-4000)})` });

    const closed = await deliver('closed', second);
    expect(closed.reason).toMatch(/^preview: removed /);
    expect(await preview()).toBeUndefined();
    await waitFor(async () => (await docker(['service', 'ls', '-q', '--filter', `name=${p.appName}`])).out === '', {
      timeoutMs: 60_000,
      what: () => `service ${p.appName} to be removed (agent: ${s.agentOutput().slice(-1500)})`,
    });
    await waitFor(answers(http, 404), { timeoutMs: 30_000, what: () => `${host} to stop being routed (agent: ${s.agentOutput().slice(-4000)})` });
  }, 600_000);
});
