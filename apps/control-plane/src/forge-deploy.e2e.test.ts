// A deploy from a forge source, end to end (testing/stack.ts: API, relay, NATS, the agent and
// the swarm): a GitHub App connection against the fake GitHub API (testing/fake-forges.ts)
// mints an installation token, and the agent clones from a git server that accepts only that
// token. The token is nowhere in the control plane's log, the agent's output, the deployment
// log (the stack's secret watch) or the built image's `.git/config`.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { startGitServer, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeForges, startFakeForges } from './testing/fake-forges.js';
import { removeBuiltImages } from './testing/built-images.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
let git: TestGitServer;
let forges: FakeForges;
const appIds: string[] = [];
const token = `ghs_${randomBytes(16).toString('hex')}`;
const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });

beforeAll(async () => {
  s = await startTestStack('forge');
  s.t.watch.secret(token);
  git = await startGitServer({ auth: { username: 'x-access-token', password: token } });
  forges = await startFakeForges({
    github: { appId: 31337, installationId: '99', publicKey: keys.publicKey, token },
    gitlab: { accessToken: 'unused-a', refreshToken: 'unused-r', clientId: 'c', clientSecret: 'unused-s' },
    bitbucket: { username: 'u', appPassword: 'unused-p' },
    gitea: { token: 'unused-t' },
    cloneUrls: { github: '', gitlab: '', bitbucket: '', gitea: '' },
  });
}, 120_000);

afterAll(async () => {
  const closed = await s?.close().then(() => null, (err: unknown) => err);
  await forges?.stop();
  await git?.stop();
  await removeBuiltImages(appIds);
  if (closed) throw closed;
}, 90_000);

describe('deploying from a forge', () => {
  it('clones a GitHub App repository with a minted installation token and builds it; the token stays out of the image and the logs', async () => {
    const { t } = s;
    const repo = await git.createRepo(`forge-${s.run}`, {
      Dockerfile: ['FROM busybox:latest', 'COPY . /src', `RUN echo "forge build ${s.run}" > /built.txt`, 'CMD ["sleep", "3600"]', ''].join('\n'),
      'page.txt': 'from the forge\n',
    });
    await repo.commit({ 'page.txt': 'tagged release\n' }, { branch: 'release' });
    forges.cloneUrls.github = repo.url;

    const ownerId = (await t.call('user.get')).body.userId;
    const privateKey = keys.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
    const connection = await t.call('forgeA.create', {
      name: `gh-${s.run}`, authId: ownerId, appId: 31337, clientId: 'Iv1.e2e', clientSecret: 'e2e-client-secret', installationId: '99',
      privateKey, webhookSecret: 'e2e-hook-secret', apiUrl: `${forges.baseUrl}/gh`,
    });
    expect(connection.status, JSON.stringify(connection.body)).toBe(200);

    const created = await t.call('application.create', { name: 'forgeweb', appName: `forgeweb-${s.run}`, environmentId: s.environmentId, sourceType: 'forgeA' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const app = created.body as { applicationId: string; appName: string };
    s.services.push(app.appName);
    appIds.push(app.applicationId);
    for (const [op, input] of [
      ['application.saveForgeAProvider', { repository: 'shop', owner: 'acme', buildPath: '/', forgeAId: connection.body.forgeAId, branch: 'release', triggerType: 'tag' }],
      ['application.saveBuildType', { buildType: 'containerfile', containerfile: 'Dockerfile', containerContextPath: '.', containerBuildStage: null, legacyVersion: null, packTwoVersion: null }],
    ] as const) {
      const res = await t.call(op, { applicationId: app.applicationId, ...input });
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
    }

    const minted = forges.minted.length;
    const result = await s.deployAndWait(app.applicationId);
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(result.status, logs.log).toBe('done');
    expect(forges.minted.length).toBe(minted + 1);
    expect(logs.log).toContain("with the forge's token");
    expect(logs.log).toContain(`Cloning ${repo.url}`);

    const images = await docker(['image', 'ls', '--format', '{{.Repository}}:{{.Tag}}', '--filter', `label=skiff.id=${app.applicationId}`]);
    const image = images.out.split('\n').find(Boolean);
    expect(image).toBeTruthy();
    const page = await docker(['run', '--rm', '--entrypoint', 'cat', image!, '/src/page.txt']);
    expect(page.out).toBe('tagged release');
    // The clone's .git went into the image with `COPY . /src`: its config names the repository, and no credential.
    const gitFiles = await docker(['run', '--rm', '--entrypoint', 'cat', image!, '/src/.git/config']);
    expect(gitFiles.out).toContain(`url = ${repo.url}`);
    expect(gitFiles.out).not.toContain(token);
    expect(gitFiles.out).not.toContain(Buffer.from(`x-access-token:${token}`).toString('base64'));
  });
});
