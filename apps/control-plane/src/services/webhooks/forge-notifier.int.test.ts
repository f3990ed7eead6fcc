// Preview comments, commit statuses and collaborator checks on GitHub, GitLab and Bitbucket, through the
// public webhook route, against the fake forge APIs (testing/fake-forges.ts) and real Postgres:
// the GitHub App's installation token is minted for the calls, GitLab's expired OAuth token is
// refreshed first (ForgeClient.apiToken, wired as the notifier's ForgeTokens).
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { type FakeForges, startFakeForges } from '../../testing/fake-forges.js';
import { signatureFor } from './index.js';
import { Command } from '@skiff/proto';
import { CommandOutbox } from '../../agents/outbound/outbox.js';

let t: TestPlatform;
let forges: FakeForges;
let env: string;
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const secrets = {
  ghToken: `ghs_${randomBytes(12).toString('hex')}`,
  ghHook: `whsec-${randomBytes(8).toString('hex')}`,
  glAccess: `glpat-old-${randomBytes(8).toString('hex')}`,
  glRefresh: `glrt-${randomBytes(8).toString('hex')}`,
  glClientSecret: `gloas-${randomBytes(8).toString('hex')}`,
  bbToken: `ATATT${randomBytes(12).toString('hex')}`,
};

const ok = async (op: string, input?: Record<string, unknown>) => {
  const res = await t.call(op, input);
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

beforeAll(async () => {
  t = await startTestPlatform();
  for (const s of Object.values(secrets)) t.watch.secret(s);
  forges = await startFakeForges({
    github: { appId: 5151, installationId: '88', publicKey: keys.publicKey, token: secrets.ghToken },
    gitlab: { accessToken: secrets.glAccess, refreshToken: secrets.glRefresh, clientId: 'gl-app', clientSecret: secrets.glClientSecret },
    bitbucket: { username: 'u', appPassword: 'unused-p', email: 'dev@acme.example', apiToken: secrets.bbToken },
    gitea: { token: 'unused-t' },
    cloneUrls: { github: 'http://127.0.0.1:9/acme/shop.git', gitlab: 'http://127.0.0.1:9/acme/shop.git', bitbucket: 'http://127.0.0.1:9/acme/shop.git', gitea: '' },
  });
  env = (await ok('project.create', { name: 'notifier' })).environments[0].environmentId;
});
afterAll(async () => {
  await forges?.stop();
  await t?.close();
});

async function deliver(path: string, headers: Record<string, string>, body: string) {
  const res = await t.platform.app.request(`http://localhost${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  expect(res.status).toBe(200);
  return (await res.json()) as { results: { id: string; decision: string; reason: string; deploymentId: string | null }[] };
}

const sha = () => randomBytes(20).toString('hex');

describe('GitHub (App installation token)', () => {
  it('a pull request gets its comment and pending status with a minted token; with the collaborator check, the forge is asked', async () => {
    const authId = (await ok('user.get')).userId;
    const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const forge = await ok('forgeA.create', { name: 'gh', appName: 'gh', appId: 5151, clientId: 'Iv1.n', clientSecret: 'cs', privateKey, installationId: '88', webhookSecret: secrets.ghHook, apiUrl: `${forges.baseUrl}/gh`, authId });
    const app = await ok('application.create', { name: 'gh-web', environmentId: env, sourceType: 'forgeA' });
    await ok('application.saveForgeAProvider', { applicationId: app.applicationId, repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: forge.forgeAId, branch: 'main', triggerType: 'push' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true, previewWildcard: '*.gh.test', previewRequireCollaboratorPermissions: true });
    const pr = (number: number, user: string, head: string) =>
      JSON.stringify({
        action: 'opened', number,
        pull_request: { id: 600 + number, number, title: `PR ${number}`, html_url: `https://github.example/acme/shop/pull/${number}`, head: { ref: `f${number}`, sha: head, repo: { full_name: `${user}/shop`, clone_url: `http://127.0.0.1:9/${user}/shop.git` } }, user: { login: user } },
        repository: { full_name: 'acme/shop' }, installation: { id: 88 },
      });
    const send = (body: string) => deliver('/webhooks/github', { 'x-github-event': 'pull_request', 'x-github-delivery': randomBytes(8).toString('hex'), 'x-hub-signature-256': signatureFor('github', secrets.ghHook, body) }, body);

    const refused = await send(pr(1, 'mallory', sha()));
    expect(refused.results[0]).toMatchObject({ decision: 'refused', reason: 'refused: pull request #1 comes from mallory, who may not write to the repository, and previewRequireCollaboratorPermissions is set' });
    expect(forges.calls).toContainEqual(expect.objectContaining({ forge: 'gh', method: 'GET', path: '/repos/acme/shop/collaborators/mallory/permission', authorization: `Bearer ${secrets.ghToken}` }));

    forges.collaborators.push('carol');
    const head = sha();
    const opened = await send(pr(2, 'carol', head));
    expect(opened.results[0]!.decision).toBe('preview');
    await waitFor(() => forges.calls.filter((c) => c.method === 'POST').length >= 2, { timeoutMs: 10_000, what: 'the comment and the status' });
    expect(forges.calls).toContainEqual(expect.objectContaining({ method: 'POST', path: '/repos/acme/shop/issues/2/comments', authorization: `Bearer ${secrets.ghToken}` }));
    const status = forges.calls.find((c) => c.path === `/repos/acme/shop/statuses/${head}`);
    expect(status).toMatchObject({ method: 'POST', authorization: `Bearer ${secrets.ghToken}`, body: { state: 'pending', context: 'skiff/preview' } });
    expect(status!.body.target_url).toMatch(/^http:\/\/preview-gh-web-[\w-]+\.gh\.test$/);

    // The preview builds the pull request's head commit, not its branch's newest: the command's git source names it, and so does the deployment.
    const deploymentId = opened.results[0]!.deploymentId!;
    const command = await waitFor(() => t.db.selectFrom('commands').select('payload').where('deploymentId', '=', deploymentId).executeTakeFirst(), { timeoutMs: 10_000, what: 'the preview deploy command' });
    const decoded = Command.decode(new CommandOutbox(t.platform.secrets).open(command.payload));
    // Carol's fork, on the base's forge host: built from the fork, with the base connection's login.
    expect(decoded.payload).toMatchObject({
      $case: 'deployApplication',
      value: { source: { kind: { $case: 'git', value: { branch: 'f2', commit: head, url: 'http://127.0.0.1:9/carol/shop.git', httpPassword: secrets.ghToken } } } },
    });
    expect((await t.db.selectFrom('deployments').select('commit').where('id', '=', deploymentId).executeTakeFirstOrThrow()).commit).toBe(head);
  });
});

describe('GitLab (OAuth token, refreshed when expired)', () => {
  it('the expired token is refreshed before the note and the status are sent', async () => {
    const authId = (await ok('user.get')).userId;
    const forge = await ok('forgeB.create', { name: 'gl', forgeBUrl: `${forges.baseUrl}/gl`, applicationId: 'gl-app', secret: secrets.glClientSecret, accessToken: secrets.glAccess, refreshToken: secrets.glRefresh, authId });
    const row = await t.db.selectFrom('gitProviders').selectAll().where('id', '=', forge.forgeBId).executeTakeFirstOrThrow();
    const opened = JSON.parse(t.platform.secrets.open(row.secrets));
    await t.db.updateTable('gitProviders').set({ secrets: t.platform.secrets.seal(JSON.stringify({ ...opened, tokenExpiresAt: new Date(Date.now() - 1000).toISOString() })) }).where('id', '=', row.id).execute();
    const app = await ok('application.create', { name: 'gl-web', environmentId: env, sourceType: 'forgeB' });
    await ok('application.saveForgeBProvider', { applicationId: app.applicationId, forgeBBuildPath: '/', forgeBOwner: 'acme', forgeBRepository: 'shop', forgeBId: forge.forgeBId, forgeBProjectId: 2010, forgeBPathNamespace: 'acme/shop', forgeBBranch: 'main' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true });
    const hookToken = (await ok('application.refreshToken', { applicationId: app.applicationId })).refreshToken as string;
    t.watch.secret(hookToken);
    const head = sha();
    const body = JSON.stringify({
      object_kind: 'merge_request', project: { id: 2010, path_with_namespace: 'acme/shop' }, user: { id: 9, username: 'dev' },
      object_attributes: { id: 905, iid: 5, action: 'open', title: 'MR 5', url: 'https://gitlab.example/acme/shop/-/merge_requests/5', source_branch: 'mr5', last_commit: { id: head }, source_project_id: 2010, target_project_id: 2010, author_id: 9 },
    });
    const refreshes = forges.gitlab.refreshes;
    const answer = await deliver('/webhooks/gitlab', { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-event-uuid': randomBytes(8).toString('hex'), 'x-gitlab-token': hookToken }, body);
    expect(answer.results[0]!.decision).toBe('preview');
    await waitFor(() => forges.calls.some((c) => c.forge === 'gl' && c.path.startsWith('/api/v4/projects/2010/statuses/')), { timeoutMs: 10_000, what: 'the GitLab status' });
    await waitFor(() => forges.calls.some((c) => c.forge === 'gl' && c.path === '/api/v4/projects/2010/merge_requests/5/notes'), { timeoutMs: 10_000, what: 'the GitLab note' });
    t.watch.secret(forges.gitlab.accessToken);
    t.watch.secret(forges.gitlab.refreshToken);
    expect(forges.gitlab.refreshes).toBeGreaterThan(refreshes);
    const gl = forges.calls.filter((c) => c.forge === 'gl');
    expect(gl.every((c) => c.authorization === `Bearer ${forges.gitlab.accessToken}`)).toBe(true);
    expect(gl.find((c) => c.path === `/api/v4/projects/2010/statuses/${head}`)!.body).toMatchObject({ state: 'running', name: 'skiff/preview' });
  });
});

describe('Bitbucket (API token, Basic with the email as the API client)', () => {
  it('the comment and the status carry the connection login as Basic, never the token as Bearer', async () => {
    const authId = (await ok('user.get')).userId;
    const forge = await ok('forgeC.create', { name: 'bb', forgeCEmail: 'dev@acme.example', apiToken: secrets.bbToken, apiUrl: `${forges.baseUrl}/bb/2.0`, authId });
    const app = await ok('application.create', { name: 'bb-web', environmentId: env, sourceType: 'forgeC' });
    await ok('application.saveForgeCProvider', { applicationId: app.applicationId, forgeCBuildPath: '/', forgeCOwner: 'acme', forgeCRepository: 'shop', forgeCRepositorySlug: 'shop', forgeCId: forge.forgeCId, forgeCBranch: 'main' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true, previewWildcard: '*.bb.test' });
    const hookToken = (await ok('application.refreshToken', { applicationId: app.applicationId })).refreshToken as string;
    t.watch.secret(hookToken);
    const head = sha();
    const body = JSON.stringify({
      pullrequest: {
        id: 7, title: 'PR 7', links: { html: { href: 'https://bitbucket.example/acme/shop/pull-requests/7' } },
        source: { branch: { name: 'f7' }, commit: { hash: head }, repository: { full_name: 'acme/shop' } }, author: { uuid: '{dev}' },
      },
      repository: { full_name: 'acme/shop' },
    });
    const answer = await deliver('/webhooks/bitbucket', { 'x-event-key': 'pullrequest:created', 'x-request-uuid': randomBytes(8).toString('hex'), 'x-hub-signature': signatureFor('bitbucket', hookToken, body) }, body);
    expect(answer.results[0]!.decision).toBe('preview');
    await waitFor(() => forges.calls.some((c) => c.forge === 'bb' && c.path === `/2.0/repositories/acme/shop/commit/${head}/statuses/build`), { timeoutMs: 10_000, what: 'the Bitbucket status' });
    await waitFor(() => forges.calls.some((c) => c.forge === 'bb' && c.path === '/2.0/repositories/acme/shop/pullrequests/7/comments'), { timeoutMs: 10_000, what: 'the Bitbucket comment' });
    const basic = `Basic ${Buffer.from(`dev@acme.example:${secrets.bbToken}`).toString('base64')}`;
    const bb = forges.calls.filter((c) => c.forge === 'bb');
    expect(bb.every((c) => c.authorization === basic)).toBe(true);
    expect(bb.find((c) => c.path.endsWith('/statuses/build'))!.body).toMatchObject({ key: 'skiff/preview', state: 'INPROGRESS', url: expect.stringMatching(/^http:\/\/preview-bb-web-[\w-]+\.bb\.test$/) });
    expect(bb.find((c) => c.path.endsWith('/comments'))!.body).toMatchObject({ content: { raw: expect.stringContaining('is being deployed') } });
  });
});

describe('the final state after a restart', () => {
  it('a preview left pending whose deployment ended while no process followed it: the boot resume tells the forge once', async () => {
    const authId = (await ok('user.get')).userId;
    const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const forge = await ok('forgeA.create', { name: 'gh-restart', appName: 'gh-restart', appId: 5151, clientId: 'Iv1.r', clientSecret: 'cs', privateKey, installationId: '88', webhookSecret: secrets.ghHook, apiUrl: `${forges.baseUrl}/gh`, authId });
    const app = await ok('application.create', { name: 'gh-restart', environmentId: env, sourceType: 'forgeA' });
    await ok('application.saveForgeAProvider', { applicationId: app.applicationId, repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: forge.forgeAId, branch: 'main', triggerType: 'push' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true });
    const row = await t.db.selectFrom('applications').select(['serverId']).where('id', '=', app.applicationId).executeTakeFirstOrThrow();
    const head = sha();
    // What a process that stopped after posting "pending" leaves: the preview pending with its comment, its deployment since ended.
    const preview = await t.db
      .insertInto('previewDeployments')
      .values({
        id: `prv-restart-${randomBytes(4).toString('hex')}`, applicationId: app.applicationId, appName: 'preview-gh-restart-abc123', branch: 'f9',
        pullRequestId: '609', pullRequestNumber: '9', pullRequestUrl: 'https://github.example/acme/shop/pull/9', pullRequestTitle: 'PR 9',
        headCommit: head, commentId: '4242', forgeState: 'pending', forgeRepository: 'acme/shop',
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await t.db
      .insertInto('deployments')
      .values({ id: `dep-restart-${randomBytes(4).toString('hex')}`, applicationId: app.applicationId, serverId: row.serverId ?? 'local', status: 'done', title: 'Preview', description: null, reason: null, previewDeploymentId: preview.id, startedAt: new Date(), finishedAt: new Date() })
      .execute();

    const ofThisPr = () => forges.calls.filter((c) => c.path === '/repos/acme/shop/issues/comments/4242' || c.path === `/repos/acme/shop/statuses/${head}`);
    await t.platform.resumeDeferredDeploys();
    await t.platform.resumeDeferredDeploys();
    await waitFor(() => ofThisPr().length >= 2, { timeoutMs: 10_000, what: 'the final status and the edited comment' });
    const calls = ofThisPr();
    expect(calls).toHaveLength(2);
    expect(calls.find((c) => c.path.includes('/statuses/'))).toMatchObject({ method: 'POST', body: { state: 'success', context: 'skiff/preview' } });
    expect(calls.find((c) => c.path.includes('/comments/'))).toMatchObject({ method: 'PATCH', body: { body: expect.stringContaining('is ready') } });
    expect((await t.db.selectFrom('previewDeployments').select('forgeState').where('id', '=', preview.id).executeTakeFirstOrThrow()).forgeState).toBe('success');
  });
});

describe('pull requests from forks', () => {
  const gitSourceOf = async (deploymentId: string) => {
    const command = await waitFor(() => t.db.selectFrom('commands').select('payload').where('deploymentId', '=', deploymentId).executeTakeFirst(), { timeoutMs: 10_000, what: 'the preview deploy command' });
    const decoded = Command.decode(new CommandOutbox(t.platform.secrets).open(command.payload));
    if (decoded.payload?.$case !== 'deployApplication' || decoded.payload.value.source?.kind?.$case !== 'git') throw new Error('not a git deploy');
    return decoded.payload.value.source.kind.value;
  };

  it('GitHub: a fork on another host is cloned from its own address without the base connection login', async () => {
    const authId = (await ok('user.get')).userId;
    const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const forge = await ok('forgeA.create', { name: 'gh-fork', appName: 'gh-fork', appId: 5151, clientId: 'Iv1.f', clientSecret: 'cs', privateKey, installationId: '88', webhookSecret: secrets.ghHook, apiUrl: `${forges.baseUrl}/gh`, authId });
    const app = await ok('application.create', { name: 'gh-fork', environmentId: env, sourceType: 'forgeA' });
    await ok('application.saveForgeAProvider', { applicationId: app.applicationId, repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: forge.forgeAId, branch: 'main', triggerType: 'push' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true });
    const head = sha();
    const body = JSON.stringify({
      action: 'opened', number: 31,
      pull_request: { id: 631, number: 31, title: 'PR 31', html_url: 'https://github.example/acme/shop/pull/31', head: { ref: 'patch-1', sha: head, repo: { full_name: 'dave/shop', clone_url: 'https://elsewhere.example/dave/shop.git' } }, user: { login: 'dave' } },
      repository: { full_name: 'acme/shop' }, installation: { id: 88 },
    });
    const answer = await deliver('/webhooks/github', { 'x-github-event': 'pull_request', 'x-github-delivery': randomBytes(8).toString('hex'), 'x-hub-signature-256': signatureFor('github', secrets.ghHook, body) }, body);
    const mine = answer.results.find((r) => r.decision === 'preview' && r.reason.includes('preview-gh-fork-'));
    expect(mine).toBeDefined();
    const git = await gitSourceOf(mine!.deploymentId!);
    expect(git).toMatchObject({ url: 'https://elsewhere.example/dave/shop.git', branch: 'patch-1', commit: head, httpUsername: '', httpPassword: '', sshPrivateKey: '' });
  });

  it('GitHub: with previewRequireCollaboratorPermissions, a fork by a non-collaborator gets no preview; a fork without a clone address is refused', async () => {
    const app = (await t.db.selectFrom('applications').select('id').where('name', '=', 'gh-fork').executeTakeFirstOrThrow()).id;
    await ok('application.update', { applicationId: app, previewRequireCollaboratorPermissions: true });
    const send = (number: number, repo: Record<string, unknown>) => {
      const body = JSON.stringify({
        action: 'opened', number,
        pull_request: { id: 600 + number, number, title: `PR ${number}`, html_url: `https://github.example/acme/shop/pull/${number}`, head: { ref: 'x', sha: sha(), repo }, user: { login: 'erin' } },
        repository: { full_name: 'acme/shop' }, installation: { id: 88 },
      });
      return deliver('/webhooks/github', { 'x-github-event': 'pull_request', 'x-github-delivery': randomBytes(8).toString('hex'), 'x-hub-signature-256': signatureFor('github', secrets.ghHook, body) }, body);
    };
    const before = await t.db.selectFrom('previewDeployments').select('id').where('applicationId', '=', app).execute();
    const refused = await send(32, { full_name: 'erin/shop', clone_url: 'http://127.0.0.1:9/erin/shop.git' });
    expect(refused.results.find((r) => r.id === app)).toMatchObject({ decision: 'refused', reason: expect.stringContaining('comes from erin, who may not write to the repository') });
    forges.collaborators.push('erin');
    const noClone = await send(33, { full_name: 'erin/shop', clone_url: 'ext::sh -c touch% /tmp/pwned' });
    expect(noClone.results.find((r) => r.id === app)).toMatchObject({ decision: 'refused', reason: 'refused: pull request #33 comes from a fork whose clone address the delivery does not carry' });
    expect(await t.db.selectFrom('previewDeployments').select('id').where('applicationId', '=', app).execute()).toHaveLength(before.length);
  });

  it('Bitbucket: a fork on the same host is cloned from the fork with the base connection login', async () => {
    const authId = (await ok('user.get')).userId;
    const forge = await ok('forgeC.create', { name: 'bb-fork', forgeCEmail: 'dev@acme.example', apiToken: secrets.bbToken, apiUrl: `${forges.baseUrl}/bb/2.0`, authId });
    const app = await ok('application.create', { name: 'bb-fork', environmentId: env, sourceType: 'forgeC' });
    await ok('application.saveForgeCProvider', { applicationId: app.applicationId, forgeCBuildPath: '/', forgeCOwner: 'acme', forgeCRepository: 'shop', forgeCRepositorySlug: 'shop', forgeCId: forge.forgeCId, forgeCBranch: 'main' });
    await ok('application.update', { applicationId: app.applicationId, isPreviewDeploymentsActive: true });
    const hookToken = (await ok('application.refreshToken', { applicationId: app.applicationId })).refreshToken as string;
    t.watch.secret(hookToken);
    const head = sha();
    const body = JSON.stringify({
      pullrequest: {
        id: 41, title: 'PR 41', links: { html: { href: 'https://bitbucket.example/acme/shop/pull-requests/41' } },
        source: { branch: { name: 'fix' }, commit: { hash: head }, repository: { full_name: 'frank/shop', links: { html: { href: 'http://127.0.0.1:9/frank/shop' } } } }, author: { uuid: '{frank}' },
      },
      repository: { full_name: 'acme/shop' },
    });
    const answer = await deliver('/webhooks/bitbucket', { 'x-event-key': 'pullrequest:created', 'x-request-uuid': randomBytes(8).toString('hex'), 'x-hub-signature': signatureFor('bitbucket', hookToken, body) }, body);
    const mine = answer.results.find((r) => r.decision === 'preview');
    expect(mine).toBeDefined();
    const git = await gitSourceOf(mine!.deploymentId!);
    expect(git).toMatchObject({ url: 'http://127.0.0.1:9/frank/shop.git', branch: 'fix', commit: head, httpPassword: secrets.bbToken });
  });
});
