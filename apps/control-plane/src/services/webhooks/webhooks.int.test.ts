// Push-to-deploy through the public routes, over real HTTP on loopback, against real Postgres:
// each forge's delivery headers and payload shapes, signed as the forge signs them.
import { serve } from '@hono/node-server';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { KEEP_DELIVERIES, type ForgeSource, signatureFor, WebhookDeliveries } from './index.js';
import { startFakeForges } from '../../testing/fake-forges.js';

let t: TestPlatform;
let server: ReturnType<typeof serve>;
let base: string;
let env: string;

const ok = async (op: string, input?: Record<string, unknown>) => {
  const res = await t.call(op, input);
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

beforeAll(async () => {
  t = await startTestPlatform();
  server = serve({ fetch: t.platform.app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  env = (await ok('project.create', { name: 'hooks' })).environments[0].environmentId;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await t?.close();
});

/** Each forge's event and delivery headers, as the forge sends them. */
const EVENT: Record<ForgeSource, [string, string]> = {
  github: ['x-github-event', 'x-github-delivery'],
  gitlab: ['x-gitlab-event', 'x-gitlab-event-uuid'],
  bitbucket: ['x-event-key', 'x-request-uuid'],
  gitea: ['x-gitea-event', 'x-gitea-delivery'],
};
const SIGNATURE: Record<ForgeSource, string> = { github: 'x-hub-signature-256', gitlab: 'x-gitlab-token', bitbucket: 'x-hub-signature', gitea: 'x-gitea-signature' };

/** Sends a delivery as `source` does (its headers, its signature with `secret`); answers status, body and time taken. */
async function deliver(source: ForgeSource, secret: string, event: string, payload: unknown, deliveryId = randomUUID(), signWith = secret) {
  const body = JSON.stringify(payload);
  const [eventHeader, deliveryHeader] = EVENT[source];
  const started = performance.now();
  const res = await fetch(`${base}/webhooks/${source}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': `${source}-Hookshot/test`,
      [eventHeader]: event,
      [deliveryHeader]: deliveryId,
      [SIGNATURE[source]]: signatureFor(source, signWith, body),
    },
    body,
  });
  return { status: res.status, body: (await res.json()) as any, ms: performance.now() - started };
}

const sha = () => randomUUID().replaceAll('-', '').padEnd(40, '0');
const commits = (files: string[]) => [{ id: sha(), message: 'change', added: [], modified: files, removed: [] }];
const githubPush = (repo: string, branch: string, files = ['src/index.ts']) => ({
  ref: `refs/heads/${branch}`, before: '0'.repeat(40), after: sha(), deleted: false,
  repository: { full_name: repo, name: repo.split('/')[1], owner: { login: repo.split('/')[0] } },
  installation: { id: 7654321 }, head_commit: { id: sha() }, commits: commits(files),
});
const gitlabPush = (repo: string, branch: string, files = ['src/index.ts']) => {
  const after = sha();
  return { object_kind: 'push', event_name: 'push', ref: `refs/heads/${branch}`, before: '0'.repeat(40), after, checkout_sha: after, project_id: 4211, project: { id: 4211, path_with_namespace: repo }, commits: commits(files) };
};
const bitbucketPush = (repo: string, branch: string) => ({
  repository: { full_name: repo, type: 'repository' },
  push: { changes: [{ old: { type: 'branch', name: branch }, new: { type: 'branch', name: branch, target: { type: 'commit', hash: sha() } } }] },
});

/** A GitHub App connection whose webhook secret is `secret`. */
async function githubApp(name: string, secret: string) {
  const privateKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return ok('forgeA.create', { appName: name, appId: 1, clientId: 'Iv1.test', clientSecret: 'client-secret', privateKey, installationId: '7654321', webhookSecret: secret, authId: (await ok('user.get')).userId, name });
}

const deliveries = async (applicationId: string) => (await ok('application.webhookDeliveries', { applicationId })).deliveries as any[];

async function forgeApp(kind: 'forgeA' | 'forgeB' | 'forgeC' | 'forgeD', source: Record<string, unknown>) {
  const app = await ok('application.create', { name: `${kind}-app`, environmentId: env, sourceType: kind });
  const save = { forgeA: 'saveForgeAProvider', forgeB: 'saveForgeBProvider', forgeC: 'saveForgeCProvider', forgeD: 'saveForgeDProvider' }[kind];
  await ok(`application.${save}`, { applicationId: app.applicationId, ...source });
  const token = (await ok('application.refreshToken', { applicationId: app.applicationId })).refreshToken as string;
  t.watch.secret(token);
  return { id: app.applicationId as string, token };
}

describe('GitHub (forgeA): the App connection\'s webhook secret', () => {
  const secret = `whsec-${randomUUID()}`;
  let app: { id: string };

  beforeAll(async () => {
    t.watch.secret(secret);
    const forge = await githubApp('skiff-test', secret);
    app = await forgeApp('forgeA', { repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: forge.forgeAId, branch: 'main', triggerType: 'push', watchPaths: ['src/**'] });
  });

  it('a push on the branch answers at once with the queued deployment; a forge that cannot be reached for the clone login ends it in error, with its reason', async () => {
    const res = await deliver('github', secret, 'push', githubPush('acme/shop', 'main'));
    expect(res.status).toBe(200);
    const [result] = res.body.results;
    expect(result).toMatchObject({ id: app.id, decision: 'deployed', reason: 'deployed: push to main changed src/index.ts' });
    expect(result.deploymentId).toEqual(expect.any(String));
    // The login is asked of the forge (api.github.com: unreachable here) after the answer.
    const ended = await waitFor(
      async () => {
        const d = await ok('deployment.readLogs', { deploymentId: result.deploymentId });
        return d.status === 'error' ? d : null;
      },
      { timeoutMs: 20_000, what: 'the deployment to end in error' },
    );
    expect(ended.reason).toMatch(/^forgeAId: forgeA \(GitHub\) could not be reached/);
    expect(ended.log).toContain('Not started: forgeAId: forgeA (GitHub) could not be reached');
    const [last] = await deliveries(app.id);
    expect(last).toMatchObject({ source: 'github', event: 'push', ref: 'main', decision: 'refused', deploymentId: result.deploymentId });
    expect(last.reason).toMatch(/^refused: forgeAId: forgeA \(GitHub\) could not be reached/);
    expect((await ok('application.one', { applicationId: app.id })).applicationStatus).toBe('error');
  });

  it('a push to another branch is ignored with its reason', async () => {
    const res = await deliver('github', secret, 'push', githubPush('acme/shop', 'dev'));
    expect(res.body.results[0].reason).toBe('ignored: branch dev is not main');
    expect((await deliveries(app.id))[0]).toMatchObject({ ref: 'dev', decision: 'ignored', reason: 'ignored: branch dev is not main' });
  });

  it('a watch-path miss is ignored', async () => {
    const res = await deliver('github', secret, 'push', githubPush('acme/shop', 'main', ['README.md', 'docs/intro.md']));
    expect(res.body.results[0].reason).toBe('ignored: no changed file matches the watch paths (src/**)');
  });

  it('a forged signature is refused and recorded nowhere', async () => {
    const before = (await deliveries(app.id)).length;
    const res = await deliver('github', secret, 'push', githubPush('acme/shop', 'main'), randomUUID(), 'not-the-secret');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
    expect((await deliveries(app.id)).length).toBe(before);
  });

  it('a replay (the same delivery id, or the same body under a new id) is ignored', async () => {
    const payload = githubPush('acme/shop', 'dev');
    const id = randomUUID();
    expect((await deliver('github', secret, 'push', payload, id)).body.replay).toBeUndefined();
    for (const again of [id, randomUUID()]) {
      const res = await deliver('github', secret, 'push', payload, again);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ replay: true, results: [{ decision: 'ignored', reason: 'ignored: replay of a delivery already received' }] });
    }
  });
});

describe('forge logins are minted after the answer', () => {
  it('a forge slow to answer does not delay the answer; the fake GitHub API mints the token, then the deploy command is queued; the slow one ends in error', async () => {
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forges = await startFakeForges({
      github: { appId: 4242, installationId: '77', publicKey: keys.publicKey },
      gitlab: { accessToken: 'unused-a', refreshToken: 'unused-r', clientId: 'c', clientSecret: 'unused-s' },
      bitbucket: { username: 'u', appPassword: 'unused-p' },
      gitea: { token: 'unused-t' },
      cloneUrls: { github: 'http://127.0.0.1:9/acme/shop.git', gitlab: '', bitbucket: '', gitea: '' },
    });
    // Answers every call after 3 s, with an error.
    const slow = createServer((_req, res) => setTimeout(() => res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"busy"}'), 3000));
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    try {
      const secret = `whsec-${randomUUID()}`;
      t.watch.secret(secret);
      const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
      const authId = (await ok('user.get')).userId;
      const connection = (name: string, apiUrl: string) =>
        ok('forgeA.create', { appName: name, appId: 4242, clientId: 'Iv1.later', clientSecret: 'client-secret', privateKey, installationId: '77', webhookSecret: secret, apiUrl, authId, name });
      const fast = await connection('fast-forge', `${forges.baseUrl}/gh`);
      const slowForge = await connection('slow-forge', `http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
      const source = { repository: 'shop', owner: 'acme', buildPath: '/', branch: 'main', triggerType: 'push', watchPaths: null };
      const quick = await forgeApp('forgeA', { ...source, forgeAId: fast.forgeAId });
      const late = await forgeApp('forgeA', { ...source, forgeAId: slowForge.forgeAId });

      const res = await deliver('github', secret, 'push', githubPush('acme/shop', 'main'));
      expect(res.status).toBe(200);
      expect(res.ms).toBeLessThan(1000);
      const resultOf = (id: string) => res.body.results.find((r: any) => r.id === id);
      expect(resultOf(quick.id)).toMatchObject({ decision: 'deployed', deploymentId: expect.any(String) });
      expect(resultOf(late.id)).toMatchObject({ decision: 'deployed', deploymentId: expect.any(String) });

      const command = await waitFor(
        () => t.db.selectFrom('commands').select('kind').where('deploymentId', '=', resultOf(quick.id).deploymentId).executeTakeFirst(),
        { timeoutMs: 10_000, what: 'the deploy command once the token is minted' },
      );
      expect(command.kind).toBe('COMMAND_KIND_DEPLOY_APPLICATION');
      expect(forges.minted).toHaveLength(1);
      const ended = await waitFor(
        async () => {
          const d = await ok('deployment.readLogs', { deploymentId: resultOf(late.id).deploymentId });
          return d.status === 'error' ? d : null;
        },
        { timeoutMs: 20_000, what: 'the slow forge\'s deployment to end in error' },
      );
      expect(ended.reason).toMatch(/forgeA \(GitHub\) answered an error \(HTTP 503\): busy/);
      expect((await deliveries(late.id))[0]).toMatchObject({ decision: 'refused', deploymentId: resultOf(late.id).deploymentId });

      // A restart between the answer and the login leaves a queued deployment without its command: it is started at boot.
      const left = `dep_left_${randomUUID().slice(0, 8)}`;
      await t.db.insertInto('deployments').values({ id: left, applicationId: quick.id, serverId: 'local', status: 'queued', title: 'Webhook: push to main', description: null, reason: null, startedAt: null, finishedAt: null }).execute();
      await t.platform.resumeDeferredDeploys();
      expect(await t.db.selectFrom('commands').select('kind').where('deploymentId', '=', left).executeTakeFirst()).toEqual({ kind: 'COMMAND_KIND_DEPLOY_APPLICATION' });
      expect(forges.minted).toHaveLength(2);
    } finally {
      await forges.stop();
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});

describe('GitLab, Gitea and Bitbucket: the workload\'s refreshToken as the hook secret', () => {
  it('GitLab X-Gitlab-Token: a push decides; another token is refused', async () => {
    const app = await forgeApp('forgeB', { forgeBBuildPath: '/', forgeBOwner: 'acme', forgeBRepository: 'api', forgeBId: null, forgeBProjectId: 4211, forgeBPathNamespace: 'acme/api', forgeBBranch: 'main', watchPaths: null });
    const res = await deliver('gitlab', app.token, 'Push Hook', gitlabPush('acme/api', 'main'));
    expect(res.status).toBe(200);
    expect(res.body.results[0]).toMatchObject({ id: app.id, decision: 'refused' });
    expect((await deliver('gitlab', 'wrong', 'Push Hook', gitlabPush('acme/api', 'main'))).status).toBe(401);
    expect((await deliver('gitlab', app.token, 'Push Hook', gitlabPush('acme/api', 'feature/x'))).body.results[0].reason).toBe('ignored: branch feature/x is not main');
  });

  it('Gitea X-Gitea-Signature: a push decides; a forged one is refused', async () => {
    const app = await forgeApp('forgeD', { forgeDBuildPath: '/', forgeDOwner: 'acme', forgeDRepository: 'web', forgeDId: null, forgeDBranch: 'main' });
    const res = await deliver('gitea', app.token, 'push', githubPush('acme/web', 'main'));
    expect(res.body.results[0]).toMatchObject({ id: app.id, decision: 'refused' });
    expect((await deliver('gitea', app.token, 'push', githubPush('acme/web', 'main'), randomUUID(), 'forged')).status).toBe(401);
  });

  it('Bitbucket X-Hub-Signature: a push decides; with watch paths it is ignored (Bitbucket lists no files)', async () => {
    const app = await forgeApp('forgeC', { forgeCBuildPath: '/', forgeCOwner: 'acme', forgeCRepository: 'Site', forgeCRepositorySlug: 'site', forgeCId: null, forgeCBranch: 'main' });
    const res = await deliver('bitbucket', app.token, 'repo:push', bitbucketPush('acme/site', 'main'));
    expect(res.body.results[0]).toMatchObject({ id: app.id, decision: 'refused' });
    await ok('application.update', { applicationId: app.id, watchPaths: ['src/**'] });
    const watched = await deliver('bitbucket', app.token, 'repo:push', bitbucketPush('acme/site', 'main'));
    expect(watched.body.results[0].reason).toMatch(/^ignored: the forge did not list changed files/);
  });
});

describe('the replay guard is per workload', () => {
  it('one organization\'s delivery never marks another\'s (same repository, same delivery id and body) as a replay', async () => {
    const other = await ok('organization.create', { name: 'Replay B' });
    const bKey = t.watch.secret((await ok('user.createApiKey', { name: 'b', metadata: { organizationId: other.organizationId } })).key as string);
    const asB = t.as(bKey);
    const okB = async (op: string, input: Record<string, unknown>) => {
      const res = await asB(op, input);
      if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const source = { forgeDBuildPath: '/', forgeDOwner: 'acme', forgeDRepository: 'shared', forgeDId: null, forgeDBranch: 'main' };
    const a = await forgeApp('forgeD', source);
    const bEnv = (await okB('project.create', { name: 'replay-b' })).environments[0].environmentId;
    const bApp = await okB('application.create', { name: 'b-app', environmentId: bEnv, sourceType: 'forgeD' });
    await okB('application.saveForgeDProvider', { applicationId: bApp.applicationId, ...source });
    const bToken = t.watch.secret((await okB('application.refreshToken', { applicationId: bApp.applicationId })).refreshToken as string);

    const payload = githubPush('acme/shared', 'main');
    const id = randomUUID();
    const first = await deliver('gitea', a.token, 'push', payload, id);
    expect(first.body.replay).toBeUndefined();
    expect(first.body.results).toEqual([expect.objectContaining({ id: a.id, decision: 'refused' })]);
    // B's hook delivers the same body under the same id: new to B.
    const toB = await deliver('gitea', bToken, 'push', payload, id);
    expect(toB.status).toBe(200);
    expect(toB.body.replay).toBeUndefined();
    expect(toB.body.results).toEqual([expect.objectContaining({ id: bApp.applicationId, decision: 'refused' })]);
    // Each workload still sees its own replays.
    for (const token of [a.token, bToken]) {
      const again = await deliver('gitea', token, 'push', payload, randomUUID());
      expect(again.body).toMatchObject({ replay: true, results: [{ decision: 'ignored', reason: 'ignored: replay of a delivery already received' }] });
    }
  });
});

describe('the generic deploy hook (plain git, registries)', () => {
  let app: { id: string; token: string };
  let path: string;

  beforeAll(async () => {
    const created = await ok('application.create', { name: 'plain', environmentId: env });
    await ok('application.saveGitProvider', { applicationId: created.applicationId, customGitUrl: 'https://git.example.com/acme/plain.git', customGitBranch: 'main', customGitBuildPath: '/', watchPaths: ['app/**'] });
    const token = (await ok('application.refreshToken', { applicationId: created.applicationId })).refreshToken;
    t.watch.secret(token);
    app = { id: created.applicationId, token };
    path = (await ok('application.webhookDeliveries', { applicationId: app.id })).webhookPath;
  });

  const post = (url: string, payload: unknown) => fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });

  it('shows its address, and queues a deploy for a push that matches', async () => {
    expect(path).toBe(`/webhooks/deploy/application/${app.id}/${app.token}`);
    const res = await post(path, githubPush('acme/plain', 'main', ['app/server.js']));
    expect(res.status).toBe(200);
    const [result] = ((await res.json()) as any).results;
    expect(result).toMatchObject({ decision: 'deployed', reason: 'deployed: push to main changed app/server.js' });
    const [deployment] = await ok('deployment.all', { applicationId: app.id });
    expect(deployment).toMatchObject({ deploymentId: result.deploymentId, status: 'queued' });
    expect(deployment.title).toMatch(/^Webhook: push to main \([0-9a-f]{7}\)$/);
  });

  it('ignores a watch-path miss, and answers NOT_FOUND alike for a wrong token and an unknown workload', async () => {
    const miss = (await (await post(path, githubPush('acme/plain', 'main', ['README.md']))).json()) as any;
    expect(miss.results[0].reason).toBe('ignored: no changed file matches the watch paths (app/**)');
    const wrong = await post(`/webhooks/deploy/application/${app.id}/${'x'.repeat(43)}`, {});
    const unknown = await post(`/webhooks/deploy/application/app_nope/${app.token}`, {});
    expect([wrong.status, unknown.status]).toEqual([404, 404]);
    expect(((await wrong.json()) as any).message).toBe(((await unknown.json()) as any).message);
  });

  it('refuses a body over 1 MiB with 413 before reading it', async () => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(1024 * 1024 + 1) });
    expect(res.status).toBe(413);
  });

  it('a new token retires the old address', async () => {
    const fresh = (await ok('application.refreshToken', { applicationId: app.id })).refreshToken;
    t.watch.secret(fresh);
    expect((await post(path, {})).status).toBe(404);
    expect((await post(`/webhooks/deploy/application/${app.id}/${fresh}`, {})).status).toBe(200);
    path = `/webhooks/deploy/application/${app.id}/${fresh}`;
  });
});

describe('delivery records', () => {
  it('keep the newest 100 per workload', async () => {
    const app = await ok('application.create', { name: 'bounded', environmentId: env });
    let n = 0;
    const store = new WebhookDeliveries({ db: t.db, ids: (prefix: string) => `${prefix}_${String(++n).padStart(4, '0')}`, clock: () => new Date(Date.UTC(2026, 0, 1, 0, 0, n)) } as never);
    for (let i = 0; i < KEEP_DELIVERIES + 25; i++) {
      await store.record({ workload: { kind: 'application', id: app.applicationId }, source: 'token', deliveryId: null, event: 'push', ref: 'main', commit: null, decision: 'ignored', reason: `ignored: #${i}`, deploymentId: null });
    }
    const kept = await t.db.selectFrom('webhookDeliveries').select('reason').where('applicationId', '=', app.applicationId).orderBy('createdAt', 'desc').execute();
    expect(kept.length).toBeGreaterThanOrEqual(KEEP_DELIVERIES);
    expect(kept.length).toBeLessThanOrEqual(KEEP_DELIVERIES + 10);
    expect(kept[0]!.reason).toBe(`ignored: #${KEEP_DELIVERIES + 24}`);
    expect((await deliveries(app.applicationId)).length).toBe(KEEP_DELIVERIES);
  });
});

describe('under load', () => {
  it('answers 100 deliveries sent within a second, each in under 1 s (it only queues)', async () => {
    const secret = `whsec-${randomUUID()}`;
    t.watch.secret(secret);
    const forge = await githubApp('load', secret);
    const plain = await ok('application.create', { name: 'load-plain', environmentId: env });
    await ok('application.saveGitProvider', { applicationId: plain.applicationId, customGitUrl: 'https://git.example.com/acme/load.git', customGitBranch: 'main', customGitBuildPath: '/', watchPaths: null });
    const token = (await ok('application.refreshToken', { applicationId: plain.applicationId })).refreshToken;
    t.watch.secret(token);
    await forgeApp('forgeA', { repository: 'load', owner: 'acme', buildPath: '/', forgeAId: forge.forgeAId, branch: 'main', triggerType: 'push' });

    // A running control plane has its database connections open and its code warm: so does this one.
    await Promise.all(Array.from({ length: 10 }, () => deliver('github', secret, 'push', githubPush('acme/load', 'warm-up'))));

    const sends = Array.from({ length: 100 }, (_, i) => async () => {
      await new Promise((r) => setTimeout(r, i * 9)); // spread over ~0.9 s
      if (i % 2 === 0) return deliver('github', secret, 'push', githubPush('acme/load', i % 4 === 0 ? 'main' : 'dev'));
      const started = performance.now();
      const res = await fetch(`${base}/webhooks/deploy/application/${plain.applicationId}/${token}`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(githubPush('acme/load', 'main')),
      });
      return { status: res.status, body: await res.json(), ms: performance.now() - started };
    });
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const answers = await Promise.all(sends.map((s) => s()));
    const used = process.cpuUsage(cpu);
    console.log(`burst: ${(performance.now() - wall).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU of this process (server and senders)`);
    const times = answers.map((a) => a.ms).sort((a, b) => a - b);
    console.log(`100 webhook deliveries: median ${times[50]!.toFixed(0)} ms, slowest ${times[99]!.toFixed(0)} ms`);
    expect(answers.map((a) => a.status)).toEqual(Array(100).fill(200));
    expect(times[99]).toBeLessThan(1000);
    // A burst on one workload queues one build (a queued deploy builds the newest commit); each delivery names it.
    const queued = await ok('deployment.all', { applicationId: plain.applicationId });
    expect(queued.map((d: any) => d.status)).toEqual(['queued']);
    const plainResults = answers.filter((_, i) => i % 2 === 1).map((a) => a.body.results[0]);
    expect(new Set(plainResults.map((r: any) => r.deploymentId))).toEqual(new Set([queued[0].deploymentId]));
    expect(plainResults.filter((r: any) => r.reason.includes('joins queued deployment')).length).toBe(49);
  });
});

type ApiCall = { method: string; path: string; authorization: string | undefined; body: any };

/**
 * Gitea- and Bitbucket-shaped APIs on loopback: comments on pull requests (posted, and edited by
 * id), commit statuses, collaborator permissions (`collaborators` may write), and the
 * repository `acme/pr-site` whose clone address is `cloneUrl`. Records every call.
 */
async function startGiteaApi(collaborators: string[] = []) {
  const calls: ApiCall[] = [];
  const comments: ApiCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const text = Buffer.concat(chunks).toString('utf8');
      const call = { method: req.method ?? '', path, authorization: req.headers.authorization, body: text ? JSON.parse(text) : null };
      calls.push(call);
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const post = /^\/api\/v1\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments$/.test(path) || /^\/2\.0\/repositories\/[^/]+\/[^/]+\/pullrequests\/\d+\/comments$/.test(path);
      const edit = /^\/api\/v1\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/.exec(path);
      if (req.method === 'POST' && post) {
        comments.push(call);
        return send(201, { id: comments.length, body: 'ok' });
      }
      if (req.method === 'PATCH' && edit && Number(edit[1]) <= comments.length) {
        comments.push(call);
        return send(200, { id: Number(edit[1]), body: 'ok' });
      }
      if (req.method === 'POST' && /^\/api\/v1\/repos\/acme\/pr-site\/statuses\/\w+$/.test(path)) return send(201, { id: calls.length, ...call.body });
      const permission = /^\/api\/v1\/repos\/acme\/pr-site\/collaborators\/([^/]+)\/permission$/.exec(path);
      if (req.method === 'GET' && permission) {
        return collaborators.includes(permission[1]!) ? send(200, { permission: 'write', role_name: 'write' }) : send(404, { message: 'not a collaborator' });
      }
      if (req.method === 'GET' && path === '/api/v1/repos/acme/pr-site') {
        return send(200, { id: 1, name: 'pr-site', full_name: 'acme/pr-site', owner: { login: 'acme' }, clone_url: 'http://127.0.0.1:9/acme/pr-site.git' });
      }
      send(404, { message: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls, comments, stop: () => new Promise((r) => server.close(r)) };
}

/** Gitea's `pull_request` delivery. */
const giteaPullRequest = (repo: string, action: string, number: number, branch: string, headRepo = repo, user = 'alice', labels: string[] = []) => ({
  action,
  number,
  pull_request: {
    id: 9000 + number, number, title: `Change ${number}`, html_url: `http://gitea.test/${repo}/pulls/${number}`, state: action === 'closed' ? 'closed' : 'open',
    head: { ref: branch, sha: sha(), repo: { full_name: headRepo, clone_url: `http://gitea.test/${headRepo}.git` } }, base: { ref: 'main', repo: { full_name: repo } },
    user: { login: user }, labels: labels.map((name, i) => ({ id: i + 1, name, color: 'ededed' })),
  },
  repository: { full_name: repo },
});

describe('preview deployments from pull requests (Gitea)', () => {
  let gitea: Awaited<ReturnType<typeof startGiteaApi>>;
  let app: { id: string; token: string };
  const accessToken = `gitea-${randomUUID()}`;

  beforeAll(async () => {
    gitea = await startGiteaApi(['trusted']);
    t.watch.secret(accessToken);
    const forge = await ok('forgeD.create', { forgeDUrl: gitea.url, accessToken, organizationName: 'acme', authId: (await ok('user.get')).userId, name: 'Gitea test' });
    app = await forgeApp('forgeD', { forgeDBuildPath: '/', forgeDOwner: 'acme', forgeDRepository: 'pr-site', forgeDId: forge.forgeDId, forgeDBranch: 'main' });
    await ok('application.update', { applicationId: app.id, isPreviewDeploymentsActive: true, previewWildcard: '*.preview.test', previewPort: 8080, previewLimit: 1 });
  });
  afterAll(() => gitea?.stop());

  const previews = async () => (await ok('previewDeployment.all', { applicationId: app.id })) as any[];
  const commandOf = (deploymentId: string) => t.db.selectFrom('commands').select(['kind', 'workloadKey']).where('deploymentId', '=', deploymentId).executeTakeFirst();
  const statuses = () => gitea.calls.filter((c) => c.method === 'POST' && c.path.includes('/statuses/'));
  let sha1 = '';

  it('opened creates the preview and its domain and deploys it (the login minted after the answer); the forge gets a comment and a pending status', async () => {
    const payload = giteaPullRequest('acme/pr-site', 'opened', 1, 'feature/one');
    sha1 = payload.pull_request.head.sha;
    const opened = await deliver('gitea', app.token, 'pull_request', payload);
    expect(opened.status).toBe(200);
    const [result] = opened.body.results;
    expect(result.decision).toBe('preview');
    const [preview] = await previews();
    expect(preview).toMatchObject({ branch: 'feature/one', headCommit: sha1, pullRequestNumber: '1', pullRequestTitle: 'Change 1', pullRequestUrl: 'http://gitea.test/acme/pr-site/pulls/1' });
    expect(preview.appName).toMatch(/^preview-[\w.-]+-[0-9a-f]{6}$/);
    const host = `${preview.appName}.preview.test`.toLowerCase();
    expect(preview.domains).toEqual([expect.objectContaining({ host, port: 8080 })]);
    expect(result.reason).toBe(`preview: created ${preview.appName} at http://${host}`);
    expect(preview.deployments).toEqual([expect.objectContaining({ deploymentId: result.deploymentId, applicationId: app.id, title: `Preview: pull request #1 (${sha1.slice(0, 7)})` })]);
    // Its deploy command runs the preview as a workload of its own, at the pull request's branch.
    const command = await waitFor(() => commandOf(result.deploymentId), { timeoutMs: 10_000, what: "the preview's deploy command" });
    expect(command).toEqual({ kind: 'COMMAND_KIND_DEPLOY_APPLICATION', workloadKey: `application:${preview.previewDeploymentId}` });
    // The parent's own deployments do not list it.
    expect(await ok('deployment.all', { applicationId: app.id })).toEqual([]);

    await waitFor(() => gitea.comments.length >= 1 && statuses().length >= 1, { timeoutMs: 10_000, what: 'the preview comment and status' });
    expect(gitea.comments[0]).toMatchObject({ method: 'POST', path: '/api/v1/repos/acme/pr-site/issues/1/comments', authorization: `token ${accessToken}` });
    expect(gitea.comments[0]!.body.body).toContain(`http://${host}`);
    expect(statuses()[0]).toMatchObject({ path: `/api/v1/repos/acme/pr-site/statuses/${sha1}`, body: { state: 'pending', context: 'skiff/preview', target_url: `http://${host}` } });

    // The deployment ends (as an agent would report it): the comment is edited, the status says success.
    await t.db.updateTable('deployments').set({ status: 'done', finishedAt: new Date() }).where('id', '=', result.deploymentId).execute();
    await waitFor(() => statuses().length >= 2 && gitea.comments.length >= 2, { timeoutMs: 10_000, what: 'the success status' });
    expect(statuses()[1]!.body).toMatchObject({ state: 'success', target_url: `http://${host}` });
    expect(gitea.comments[1]).toMatchObject({ method: 'PATCH', path: '/api/v1/repos/acme/pr-site/issues/comments/1' });
    expect(gitea.comments[1]!.body.body).toContain('is ready');
    expect((await ok('application.one', { applicationId: app.id })).applicationStatus).toBe('idle');
  });

  it('the limit refuses the next, and says so', async () => {
    const second = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 2, 'feature/two'));
    expect(second.body.results[0]).toMatchObject({ decision: 'refused', deploymentId: null, reason: 'refused: preview for pull request #2: the application has 1 previews, its previewLimit is 1' });
    expect(await previews()).toHaveLength(1);
    await waitFor(() => gitea.comments.some((c) => c.path === '/api/v1/repos/acme/pr-site/issues/2/comments'), { timeoutMs: 10_000, what: 'the refusal comment' });
    expect(gitea.comments.find((c) => c.path.includes('/issues/2/'))!.body.body).toMatch(/previewLimit/);
  });

  it('synchronized redeploys at the new head; closed removes the preview with its service, domain and route', async () => {
    const payload = giteaPullRequest('acme/pr-site', 'synchronized', 1, 'feature/one-b');
    const updated = await deliver('gitea', app.token, 'pull_request', payload);
    const [result] = updated.body.results;
    expect(result.decision).toBe('preview');
    expect(result.reason).toMatch(new RegExp(`^preview: redeploys preview-.+ for pull request #1 \\(${payload.pull_request.head.sha.slice(0, 7)}\\)$`));
    const [preview] = await previews();
    expect(preview).toMatchObject({ branch: 'feature/one-b', headCommit: payload.pull_request.head.sha });
    expect(preview.deployments.map((d: any) => d.deploymentId)).toEqual([result.deploymentId, expect.any(String)]);
    await waitFor(() => commandOf(result.deploymentId), { timeoutMs: 10_000, what: 'the redeploy command' });
    await waitFor(() => statuses().some((c) => c.path.endsWith(payload.pull_request.head.sha)), { timeoutMs: 10_000, what: 'the pending status of the new head' });

    const closed = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'closed', 1, 'feature/one-b'));
    expect(closed.body.results[0].reason).toMatch(/^preview: removed preview-.+ \(pull request #1 closed\)$/);
    expect(await previews()).toEqual([]);
    expect((await t.call('domain.one', { domainId: preview.domains[0].domainId })).status).toBe(404);
    const removal = await t.db.selectFrom('commands').select('kind').where('workloadKey', '=', `application:${preview.previewDeploymentId}`).where('kind', '=', 'COMMAND_KIND_REMOVE_WORKLOAD').executeTakeFirst();
    expect(removal).toBeDefined();
    await waitFor(() => gitea.comments.some((c) => /removed/.test(c.body?.body ?? '')), { timeoutMs: 10_000, what: 'the removal comment' });
    // Every message on pull request #1 after the first is an edit of its one comment.
    expect(gitea.comments.filter((c) => c.path.includes('/issues/1/comments'))).toHaveLength(1);
  });

  it('with previewRequireCollaboratorPermissions, the forge is asked: a fork of a non-collaborator gets no preview, a collaborator\'s does', async () => {
    await ok('application.update', { applicationId: app.id, previewRequireCollaboratorPermissions: true });
    const res = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 4, 'evil', 'mallory/pr-site', 'mallory'));
    expect(res.body.results[0]).toMatchObject({ decision: 'refused', reason: 'refused: pull request #4 comes from mallory, who may not write to the repository, and previewRequireCollaboratorPermissions is set' });
    expect(gitea.calls).toContainEqual(expect.objectContaining({ method: 'GET', path: '/api/v1/repos/acme/pr-site/collaborators/mallory/permission' }));
    expect(await previews()).toEqual([]);
    const trusted = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 5, 'ok', 'trusted/pr-site', 'trusted'));
    expect(trusted.body.results[0].decision).toBe('preview');
    await ok('previewDeployment.delete', { previewDeploymentId: (await previews())[0].previewDeploymentId });
  });

  it('previewLabels: a pull request without one of them gets no preview', async () => {
    await ok('application.update', { applicationId: app.id, previewRequireCollaboratorPermissions: false, previewLabels: ['preview'] });
    const res = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 6, 'six', 'acme/pr-site', 'alice', ['bug']));
    expect(res.body.results[0].reason).toBe('ignored: pull request #6 has none of the labels preview (previewLabels)');
    const labelled = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 7, 'seven', 'acme/pr-site', 'alice', ['preview']));
    expect(labelled.body.results[0].decision).toBe('preview');
  });

  it('a pull request whose branch git would read as an option is refused before anything is recorded', async () => {
    const res = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 8, '--upload-pack=touch /tmp/x', 'acme/pr-site', 'alice', ['preview']));
    expect(res.body.results[0]).toMatchObject({ decision: 'refused', reason: 'refused: pull request #8: the branch must not start with "-"' });
    expect((await previews()).map((p: any) => p.pullRequestNumber)).not.toContain('8');
  });

  it('previews off: a pull request is recorded as ignored', async () => {
    await ok('application.update', { applicationId: app.id, isPreviewDeploymentsActive: false });
    const res = await deliver('gitea', app.token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 3, 'feature/three'));
    expect(res.body.results[0].reason).toBe('ignored: preview deployments are off for this application');
  });

  it('a compose stack has no preview settings: its pull requests are recorded as ignored, saying so', async () => {
    const stack = await ok('compose.create', { name: 'pr-stack', environmentId: env });
    await ok('compose.update', { composeId: stack.composeId, sourceType: 'forgeD', composePath: 'docker-compose.yml', forgeDOwner: 'acme', forgeDRepository: 'pr-site', forgeDBranch: 'main' });
    const token = (await ok('compose.refreshToken', { composeId: stack.composeId })).refreshToken as string;
    t.watch.secret(token);
    const res = await deliver('gitea', token, 'pull_request', giteaPullRequest('acme/pr-site', 'opened', 9, 'nine'));
    expect(res.body.results.find((r: any) => r.id === stack.composeId)).toMatchObject({
      decision: 'ignored',
      reason: 'ignored: pull request #9: compose stacks have no preview settings (previews belong to applications)',
    });
  });

  it("deleting the application removes its previews' services too", async () => {
    const [left] = await previews();
    expect(left).toBeDefined();
    await ok('application.delete', { applicationId: app.id });
    const removal = await t.db.selectFrom('commands').select('kind').where('workloadKey', '=', `application:${left.previewDeploymentId}`).where('kind', '=', 'COMMAND_KIND_REMOVE_WORKLOAD').executeTakeFirst();
    expect(removal).toBeDefined();
    expect(await t.db.selectFrom('previewDeployments').select('id').where('id', '=', left.previewDeploymentId).executeTakeFirst()).toBeUndefined();
  });
});

describe('preview comments on Bitbucket', () => {
  it('a pull request created: the comment goes to the Bitbucket API with the connection\'s email and API token (Basic, as the API client)', async () => {
    const api = await startGiteaApi();
    try {
      const apiToken = `bb-${randomUUID()}`;
      t.watch.secret(apiToken);
      const forge = await ok('forgeC.create', { forgeCUsername: 'jdoe', forgeCEmail: 'jdoe@acme.example', apiToken, forgeCWorkspaceName: 'acme', apiUrl: `${api.url}/2.0`, authId: (await ok('user.get')).userId, name: 'Bitbucket test' });
      const app = await forgeApp('forgeC', { forgeCBuildPath: '/', forgeCOwner: 'acme', forgeCRepository: 'Site Two', forgeCRepositorySlug: 'site-two', forgeCId: forge.forgeCId, forgeCBranch: 'main' });
      await ok('application.update', { applicationId: app.id, isPreviewDeploymentsActive: true });
      const res = await deliver('bitbucket', app.token, 'pullrequest:created', {
        repository: { full_name: 'acme/site-two' },
        pullrequest: { id: 5, title: 'BB change', links: { html: { href: 'https://bitbucket.org/acme/site-two/pull-requests/5' } }, source: { branch: { name: 'bb' }, commit: { hash: 'abc1234' }, repository: { full_name: 'acme/site-two' } } },
      });
      expect(res.body.results[0].reason).toMatch(/^preview: created preview-[\w.-]+-[0-9a-f]{6}$/);
      await waitFor(() => api.comments.length >= 1, { timeoutMs: 10_000, what: 'the Bitbucket comment' });
      expect(api.comments[0]).toMatchObject({ path: '/2.0/repositories/acme/site-two/pullrequests/5/comments', authorization: `Basic ${Buffer.from(`jdoe@acme.example:${apiToken}`).toString('base64')}` });
      expect(api.comments[0]!.body.content.raw).toMatch(/^Preview `preview-.+` is being deployed\.$/);
    } finally {
      await api.stop();
    }
  });
});
