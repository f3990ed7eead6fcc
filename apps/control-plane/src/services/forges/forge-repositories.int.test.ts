// The four forges through the API, against fake forge APIs speaking their wire formats
// (testing/fake-forges.ts) and real git servers with token authentication: repositories over
// three pages, branches, testConnection (good and refused credentials), the GitHub App's JWT
// and per-use installation tokens, GitLab's refresh, and deploys / compose fetches from each
// forge's source cloned with the login minted for them.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Command } from '@skiff/proto';
import { startGitServer, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { type FakeForges, startFakeForges } from '../../testing/fake-forges.js';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';

type Kind = 'forgeA' | 'forgeB' | 'forgeC' | 'forgeD';
const KINDS: Kind[] = ['forgeA', 'forgeB', 'forgeC', 'forgeD'];

const run = randomBytes(4).toString('hex');
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
const secrets = {
  ghToken: `ghs_${randomBytes(12).toString('hex')}`,
  ghPersonal: `ghp_${randomBytes(12).toString('hex')}`,
  glAccess: `glpat-old-${randomBytes(8).toString('hex')}`,
  glRefresh: `glrt-${randomBytes(8).toString('hex')}`,
  glClientSecret: `gloas-${randomBytes(8).toString('hex')}`,
  bbPassword: `ATBB${randomBytes(12).toString('hex')}`,
  gtToken: `gtea${randomBytes(12).toString('hex')}`,
};
/** Each forge's git login (as the forge's docs give it for https clones). */
const gitLogins: Record<Kind, () => { username: string; password: string }> = {
  forgeA: () => ({ username: 'x-access-token', password: secrets.ghToken }),
  forgeB: () => ({ username: 'oauth2', password: forges.gitlab.accessToken }),
  forgeC: () => ({ username: 'jdoe', password: secrets.bbPassword }),
  forgeD: () => ({ username: 'oauth2', password: secrets.gtToken }),
};

let t: TestPlatform;
let forges: FakeForges;
const git: Partial<Record<Kind, TestGitServer>> = {};
const ids: Partial<Record<Kind, string>> = {};
let env: string;

const PLACEHOLDER = 'https://git.example/acme/shop.git';
const COMPOSE = 'services:\n  web:\n    image: busybox:latest\n';

beforeAll(async () => {
  t = await startTestPlatform();
  for (const s of Object.values(secrets)) t.watch.secret(s);
  for (const kind of KINDS) {
    // GitLab's token changes on refresh: its server checks whatever is current.
    const server = kind === 'forgeB' ? null : await startGitServer({ auth: gitLogins[kind]() });
    if (server) git[kind] = server;
  }
  forges = await startFakeForges({
    github: { appId: 4242, installationId: '77', publicKey: keys.publicKey, token: secrets.ghToken, personalToken: secrets.ghPersonal },
    gitlab: { accessToken: secrets.glAccess, refreshToken: secrets.glRefresh, clientId: 'gl-app', clientSecret: secrets.glClientSecret },
    bitbucket: { username: 'jdoe', appPassword: secrets.bbPassword },
    gitea: { token: secrets.gtToken },
    // Until a test points them at a git server (only the compose fetches clone).
    cloneUrls: { github: PLACEHOLDER, gitlab: PLACEHOLDER, bitbucket: PLACEHOLDER, gitea: PLACEHOLDER },
  });
  const ownerId = (await t.call('user.get')).body.userId;
  env = (await t.call('project.create', { name: `forges-${run}` })).body.environments[0].environmentId;
  const created: Record<Kind, Record<string, unknown>> = {
    forgeA: { appId: 4242, clientId: 'Iv1.x', clientSecret: 'gh-client-secret', installationId: '77', privateKey, webhookSecret: 'gh-hook', apiUrl: `${forges.baseUrl}/gh` },
    forgeB: { forgeBUrl: `${forges.baseUrl}/gl`, applicationId: 'gl-app', secret: secrets.glClientSecret, groupName: 'acme', accessToken: secrets.glAccess, refreshToken: secrets.glRefresh },
    forgeC: { forgeCUsername: 'jdoe', appPassword: secrets.bbPassword, forgeCWorkspaceName: 'acme', apiUrl: `${forges.baseUrl}/bb/2.0` },
    forgeD: { forgeDUrl: `${forges.baseUrl}/gt`, accessToken: secrets.gtToken, organizationName: 'acme' },
  };
  for (const kind of KINDS) {
    const res = await t.call(`${kind}.create`, { name: `${kind}-${run}`, authId: ownerId, ...created[kind] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids[kind] = res.body[`${kind}Id`];
  }
});
afterAll(async () => {
  await forges?.stop();
  for (const server of Object.values(git)) await server?.stop();
  await t?.close();
});

const idOf = (kind: Kind) => ({ [`${kind}Id`]: ids[kind]! });
const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await t.call(op, input);
  expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

describe('forge repositories, branches and connection tests', () => {
  it.each(KINDS)('%s: lists every repository over three pages, and the branches of one', async (kind) => {
    const repos = await ok(`${kind}.get${kind[0]!.toUpperCase()}${kind.slice(1)}Repositories`, idOf(kind));
    const expected = kind === 'forgeD' ? 103 : 5;
    expect(repos).toHaveLength(expected);
    expect(repos[0]).toMatchObject({ name: 'shop', fullName: 'acme/shop', owner: 'acme', defaultBranch: 'main' });
    expect(new Set(repos.map((r: { id: string }) => r.id)).size).toBe(expected);
    const branches = await ok(`${kind}.get${kind[0]!.toUpperCase()}${kind.slice(1)}Branches`, { owner: 'acme', repo: 'shop', ...idOf(kind) });
    expect(branches).toEqual([
      { name: 'main', commit: 'sha-main' },
      { name: 'release', commit: 'sha-release' },
      { name: 'v1.0', commit: 'sha-v1.0' },
    ]);
  });

  it.each(KINDS)('%s: testConnection answers how many repositories are reachable', async (kind) => {
    expect(await ok(`${kind}.testConnection`, idOf(kind))).toMatchObject({ ok: true, repositories: kind === 'forgeD' ? 103 : 5 });
  });

  it('refused credentials are BAD_REQUEST naming the connection, with the reason and no secret', async () => {
    const wrong = `ATBB-wrong-${randomBytes(8).toString('hex')}`;
    t.watch.secret(wrong);
    const res = await t.call('forgeC.testConnection', { ...idOf('forgeC'), appPassword: wrong });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['forgeCId'], message: 'forgeC (Bitbucket) refused the credentials (HTTP 401): Invalid credentials' }]);
    expect(JSON.stringify(res.body)).not.toContain(wrong);
    // The given credentials were tried, not stored: the stored ones still work.
    expect((await t.call('forgeC.testConnection', idOf('forgeC'))).status).toBe(200);

    const ownerId = (await t.call('user.get')).body.userId;
    const gitea = await ok('forgeD.create', { name: 'bad', authId: ownerId, forgeDUrl: `${forges.baseUrl}/gt`, accessToken: wrong, organizationName: 'acme' });
    const refused = await t.call('forgeD.testConnection', { forgeDId: gitea.forgeDId });
    expect(refused.status).toBe(400);
    expect(refused.body.issues[0].message).toBe('forgeD (Gitea) refused the credentials (HTTP 401): user does not exist');
  });

  it('forgeA: mints an installation token with the App JWT for each use, and never stores it', async () => {
    const before = forges.minted.length;
    await ok('forgeA.testConnection', idOf('forgeA'));
    await ok('forgeA.getForgeARepositories', idOf('forgeA'));
    expect(forges.minted.length).toBe(before + 2);
    expect(forges.seen.gh.every((h) => h === `Bearer ${secrets.ghToken}`)).toBe(true);
    const row = await t.db.selectFrom('gitProviders').selectAll().where('id', '=', ids.forgeA!).executeTakeFirstOrThrow();
    expect(t.platform.secrets.open(row.secrets)).not.toContain(secrets.ghToken);
    // A key that is not the App's: the forge refuses the JWT, and the answer says so.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const ownerId = (await t.call('user.get')).body.userId;
    const wrongKey = await ok('forgeA.create', {
      name: 'wrong key', authId: ownerId, appId: 4242, clientId: 'x', clientSecret: 'x-secret', installationId: '77', privateKey: other, webhookSecret: 'hook-x',
      apiUrl: `${forges.baseUrl}/gh`,
    });
    const res = await t.call('forgeA.testConnection', { forgeAId: wrongKey.forgeAId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].message).toBe('forgeA (GitHub) refused the credentials (HTTP 401): A JSON web token could not be decoded');
  });

  it('forgeA: a connection by personal token lists the user\'s repositories; one with neither App nor token is refused', async () => {
    const ownerId = (await t.call('user.get')).body.userId;
    const byToken = await ok('forgeA.create', { name: 'by token', authId: ownerId, accessToken: secrets.ghPersonal, apiUrl: `${forges.baseUrl}/gh` });
    expect(byToken).toMatchObject({ appId: null, clientId: null, hasAccessToken: true, hasPrivateKey: false });
    const minted = forges.minted.length;
    expect(await ok('forgeA.getForgeARepositories', { forgeAId: byToken.forgeAId })).toHaveLength(5);
    expect(forges.minted.length).toBe(minted);
    const neither = await t.call('forgeA.create', { name: 'neither', authId: ownerId, apiUrl: `${forges.baseUrl}/gh` });
    expect(neither.status).toBe(400);
    expect(neither.body.issues).toEqual([{ path: ['accessToken'], message: 'required unless the App is given (appId and privateKey)' }]);
  });

  it('forgeB: a refused OAuth token is refreshed, and the new tokens are stored sealed and write-only', async () => {
    // The fake forge starts refusing the stored token once it has been refreshed elsewhere.
    forges.gitlab.accessToken = `glat-rotated-${randomBytes(4).toString('hex')}`;
    t.watch.secret(forges.gitlab.accessToken);
    const refreshes = forges.gitlab.refreshes;
    expect(await ok('forgeB.testConnection', idOf('forgeB'))).toMatchObject({ repositories: 5 });
    expect(forges.gitlab.refreshes).toBe(refreshes + 1);
    t.watch.secret(forges.gitlab.accessToken);
    t.watch.secret(forges.gitlab.refreshToken);
    const row = await t.db.selectFrom('gitProviders').selectAll().where('id', '=', ids.forgeB!).executeTakeFirstOrThrow();
    expect(row.secrets).not.toContain(forges.gitlab.accessToken);
    const opened = JSON.parse(t.platform.secrets.open(row.secrets));
    expect(opened).toMatchObject({ accessToken: forges.gitlab.accessToken, refreshToken: forges.gitlab.refreshToken });
    expect(Date.parse(opened.tokenExpiresAt)).toBeGreaterThan(Date.now() + 3600_000);
    // The next call uses the stored new token: no second refresh.
    await ok('forgeB.getForgeBBranches', { owner: 'acme', repo: 'shop', forgeBId: ids.forgeB! });
    expect(forges.gitlab.refreshes).toBe(refreshes + 1);
    // The numeric project id names the project instead of owner/repo.
    const byId = await ok('forgeB.getForgeBBranches', { id: 2010, owner: '', repo: '', forgeBId: ids.forgeB! });
    expect(byId.map((b: { name: string }) => b.name)).toEqual(['main', 'release', 'v1.0']);
    const record = await ok('forgeB.one', idOf('forgeB'));
    expect(record).toMatchObject({ hasAccessToken: true, hasRefreshToken: true, hasSecret: true });
    expect(JSON.stringify(record)).not.toContain(forges.gitlab.accessToken);
  });

  it('forgeB: an OAuth token past its expiry is refreshed before use, without a refused call first', async () => {
    const row = await t.db.selectFrom('gitProviders').selectAll().where('id', '=', ids.forgeB!).executeTakeFirstOrThrow();
    const opened = JSON.parse(t.platform.secrets.open(row.secrets));
    const expired = { ...opened, tokenExpiresAt: new Date(Date.now() - 1000).toISOString() };
    await t.db.updateTable('gitProviders').set({ secrets: t.platform.secrets.seal(JSON.stringify(expired)) }).where('id', '=', row.id).execute();
    const refreshes = forges.gitlab.refreshes;
    const seen = forges.seen.gl.length;
    await ok('forgeB.getForgeBRepositories', idOf('forgeB'));
    expect(forges.gitlab.refreshes).toBe(refreshes + 1);
    t.watch.secret(forges.gitlab.accessToken);
    t.watch.secret(forges.gitlab.refreshToken);
    // Every API call carried the new token: the expired one was never sent.
    expect(forges.seen.gl.slice(seen).every((h) => h === `Bearer ${forges.gitlab.accessToken}`)).toBe(true);
  });

  it('branches without a connection id is BAD_REQUEST naming it', async () => {
    const res = await t.call('forgeC.getForgeCBranches', { owner: 'acme', repo: 'shop' });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['forgeCId'], message: 'required: the connection to read the repository through' }]);
  });
});

describe('deploys from a forge source', () => {
  const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));

  const sourceFields = (kind: Kind, branch: string): Record<string, unknown> => {
    switch (kind) {
      case 'forgeA':
        return { forgeAId: ids.forgeA!, owner: 'acme', repository: 'shop', branch };
      case 'forgeB':
        return { forgeBId: ids.forgeB!, forgeBOwner: 'acme', forgeBRepository: 'shop', forgeBBranch: branch };
      case 'forgeC':
        return { forgeCId: ids.forgeC!, forgeCOwner: 'acme', forgeCRepositorySlug: 'shop', forgeCRepository: 'shop', forgeCBranch: branch };
      case 'forgeD':
        return { forgeDId: ids.forgeD!, forgeDOwner: 'acme', forgeDRepository: 'shop', forgeDBranch: branch };
    }
  };

  it.each(KINDS)('%s: application.deploy sends the clone address and a login for it in the sealed command', async (kind) => {
    const app = await ok('application.create', { name: `${kind}-app`, environmentId: env });
    const save = `application.save${kind[0]!.toUpperCase()}${kind.slice(1)}Provider`;
    const fields = sourceFields(kind, 'v1.0');
    const buildPath = { forgeA: 'buildPath', forgeB: 'forgeBBuildPath', forgeC: 'forgeCBuildPath', forgeD: 'forgeDBuildPath' }[kind];
    const gitLabExtras = kind === 'forgeB' ? { forgeBProjectId: null, forgeBPathNamespace: null } : {};
    await ok(save, { applicationId: app.applicationId, [buildPath]: '/', enableSubmodules: true, ...gitLabExtras, ...fields });
    const deployment = await ok('application.deploy', { applicationId: app.applicationId });
    const row = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `application:${app.applicationId}`).orderBy('createdAt', 'desc').executeTakeFirstOrThrow();
    const login = gitLogins[kind]();
    // Sealed at rest: the stored payload does not carry the token readable.
    expect(row.payload).not.toContain(login.password);
    expect(row.payload).not.toContain(Buffer.from(login.password).toString('base64'));
    const command = decode(row.payload);
    const source = command.payload?.$case === 'deployApplication' ? command.payload.value.source?.kind : undefined;
    expect(source?.$case).toBe('git');
    expect(source?.value).toMatchObject({ branch: 'v1.0', submodules: true, sshPrivateKey: '', httpUsername: login.username, httpPassword: login.password });
    const url = (source?.value as { url: string }).url;
    expect(url).not.toContain(login.password);
    expect(deployment.deploymentId).toMatch(/^dep_/);
  });

  it.each(KINDS)('%s: compose.fetchSourceType clones the repository with the minted login (real git, token auth)', async (kind) => {
    const server = git[kind] ?? (await startGitServer({ auth: gitLogins[kind]() }));
    git[kind] = server;
    const repo = await server.createRepo(`${kind}-shop-${run}`, { 'docker-compose.yml': COMPOSE });
    setCloneUrl(kind, repo.url);
    const stack = await ok('compose.create', { name: `${kind}-stack`, environmentId: env });
    await ok('compose.update', { composeId: stack.composeId, sourceType: kind, composePath: 'docker-compose.yml', ...sourceFields(kind, 'main') });
    await ok('compose.fetchSourceType', { composeId: stack.composeId });
    const fetched = await ok('compose.one', { composeId: stack.composeId });
    expect(fetched.composeFile).toBe(COMPOSE);
    expect(t.logText()).not.toContain(gitLogins[kind]().password);
    // compose.deploy: the agent gets the same clone address and a login, in the sealed command.
    await ok('compose.deploy', { composeId: stack.composeId });
    const row = await t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `compose:${stack.composeId}`).orderBy('createdAt', 'desc').executeTakeFirstOrThrow();
    const command = decode(row.payload);
    const source = command.payload?.$case === 'deployCompose' ? command.payload.value.source?.kind : undefined;
    expect(source?.$case).toBe('git');
    expect(source?.value).toMatchObject({ url: repo.url, branch: 'main', httpUsername: gitLogins[kind]().username, httpPassword: gitLogins[kind]().password });
  });

  it('a source without its connection is BAD_REQUEST naming the column', async () => {
    const app = await ok('application.create', { name: 'no-forge', environmentId: env });
    await ok('application.saveForgeDProvider', { applicationId: app.applicationId, forgeDBuildPath: '/', forgeDOwner: 'acme', forgeDRepository: 'shop', forgeDId: null, forgeDBranch: 'main' });
    const res = await t.call('application.deploy', { applicationId: app.applicationId });
    expect(res.status).toBe(400);
    expect(res.body.issues).toEqual([{ path: ['forgeDId'], message: 'no forgeD connection set (application.saveForgeDProvider)' }]);
  });
});

/** Points the fake forge's `acme/shop` at the git server's repository. */
function setCloneUrl(kind: Kind, url: string) {
  forges.cloneUrls[({ forgeA: 'github', forgeB: 'gitlab', forgeC: 'bitbucket', forgeD: 'gitea' } as const)[kind]] = url;
}
