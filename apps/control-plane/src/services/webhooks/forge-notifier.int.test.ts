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
  return (await res.json()) as { results: { decision: string; reason: string; deploymentId: string | null }[] };
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
        pull_request: { id: 600 + number, number, title: `PR ${number}`, html_url: `https://github.example/acme/shop/pull/${number}`, head: { ref: `f${number}`, sha: head, repo: { full_name: `${user}/shop` } }, user: { login: user } },
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
    expect(decoded.payload).toMatchObject({ $case: 'deployApplication', value: { source: { kind: { $case: 'git', value: { branch: 'f2', commit: head } } } } });
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
