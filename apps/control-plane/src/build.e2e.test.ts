// Deploys that build, end to end (testing/stack.ts: API, outbox relay, NATS, report server,
// the agent process and the swarm), from a git repository served over HTTP on loopback.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { startGitServer, startSshGitServer, waitFor, type TestGitRepo, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBuiltImages } from './testing/built-images.js';
import { docker, freePort, page, startTestStack, type TestStack } from './testing/stack.js';

let s: TestStack;
let git: TestGitServer;
const appIds: string[] = [];
const SECRET = `tok-${Math.random().toString(36).slice(2)}-${Date.now()}`;
const dockerCli = existsSync('/usr/bin/docker') ? '/usr/bin/docker' : 'docker';

beforeAll(async () => {
  s = await startTestStack('build');
  // The build secret and the git login: never in the control plane's log, the agent's output or a deployment log.
  s.t.watch.secret(SECRET);
  git = await startGitServer({ auth: { username: 'deployer', password: s.t.watch.secret(`pw-${s.run}-secret`) } });
}, 120_000);

afterAll(async () => {
  // close() fails on a leaked secret; the cleanup below runs first.
  const closed = await s?.close().then(() => null, (err: unknown) => err);
  await git?.stop();
  // The images the builds made (labelled with their application's id), once the services'
  // containers are gone (an image a container still uses cannot be removed).
  await removeBuiltImages(appIds);
  if (closed) throw closed;
}, 90_000);

/** An application built from `repo` (sourceType git), named `<name>-<run>`. */
async function gitApplication(
  name: string,
  repo: TestGitRepo,
  build: Record<string, unknown>,
  settings: Record<string, unknown> = {},
  buildPath = '/',
) {
  const { t } = s;
  const created = await t.call('application.create', { name, appName: `${name}-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  const app = created.body as { applicationId: string; appName: string };
  s.services.push(app.appName);
  appIds.push(app.applicationId);
  const calls: [string, Record<string, unknown>][] = [
    ['application.saveGitProvider', { customGitUrl: repo.authUrl, customGitBranch: 'main', customGitBuildPath: buildPath, watchPaths: null }],
    [
      'application.saveBuildType',
      { buildType: 'containerfile', containerfile: null, containerContextPath: null, containerBuildStage: null, legacyVersion: null, packTwoVersion: null, ...build },
    ],
    ['application.update', settings],
  ];
  for (const [op, input] of calls) {
    const res = await t.call(op, { applicationId: app.applicationId, ...input });
    expect(res.status, `${op}: ${JSON.stringify(res.body)}`).toBe(200);
  }
  return app;
}

/** busybox's httpd serving /www on 8080, published on the host's `port`. */
const published = (port: number) => ({
  endpointSpecCluster: { Mode: 'dnsrr', Ports: [{ TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }] },
});

/**
 * A path of a service, asked from inside its running container (`docker exec … wget`): the
 * static sites listen on port 80, which this machine's egress filter intercepts from the host.
 */
async function fromInside(appName: string, path: string): Promise<string | null> {
  const ids = await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`]);
  const id = ids.out.split('\n').find(Boolean);
  if (!id) return null;
  return new Promise((resolve) =>
    execFile(dockerCli, ['exec', id, 'wget', '-q', '-O', '-', `http://127.0.0.1${path}`], (err, out) => resolve(err ? null : String(out).trim())),
  );
}

describe('deploying from git', () => {
  it('builds a containerfile with a build arg and a secret, serves it, and a redeploy after a new commit serves the new version', async () => {
    const { t } = s;
    const repo = await git.createRepo(`web-${s.run}`, {
      'web/Dockerfile': [
        'FROM busybox:latest',
        'ARG GREETING',
        `RUN --mount=type=secret,id=DEPLOY_TOKEN echo "build ${s.run} sees $(cat /run/secrets/DEPLOY_TOKEN)" && test -s /run/secrets/DEPLOY_TOKEN`,
        'COPY page.txt /page.txt',
        'RUN mkdir -p /www && echo "$GREETING: $(cat /page.txt)" > /www/index.html',
        'CMD ["httpd", "-f", "-p", "8080", "-h", "/www"]',
        '',
      ].join('\n'),
      'web/page.txt': 'first commit\n',
    });
    const port = await freePort();
    // The Containerfile and the context are relative to the build path (web/).
    const app = await gitApplication('gitweb', repo, { containerfile: 'Dockerfile', containerContextPath: '.' }, published(port), 'web');
    const env = await t.call('application.saveEnvironment', {
      applicationId: app.applicationId,
      env: '',
      buildArgs: 'GREETING=Hello from the build',
      buildSecrets: `DEPLOY_TOKEN=${SECRET}`,
      createEnvFile: false,
    });
    expect(env.status, JSON.stringify(env.body)).toBe(200);

    const first = await s.deployAndWait(app.applicationId);
    const logs = (await t.call('deployment.readLogs', { deploymentId: first.deploymentId })).body;
    expect(first.status, logs.log).toBe('done');
    await waitFor(async () => (await page(port)) === 'Hello from the build: first commit', { timeoutMs: 30_000, what: 'the built page' });
    expect(logs.log).toContain('Cloning http://***@127.0.0.1');
    expect(logs.log).toContain('Built image');
    expect(logs.log).not.toContain(SECRET);
    expect(logs.log).not.toContain(`pw-${s.run}-secret`);

    await repo.commit({ 'web/page.txt': 'second commit\n' });
    const second = await s.deployAndWait(app.applicationId, 'application.redeploy');
    expect(second.status).toBe('done');
    await waitFor(async () => (await page(port)) === 'Hello from the build: second commit', { timeoutMs: 30_000, what: 'the new commit to be served' });
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('done');
  }, 300_000);

  it('clones over SSH with a key the platform generated, authorized on a real sshd', async () => {
    const { t } = s;
    const sshd = await startSshGitServer();
    try {
      const key = await t.call('sshKey.generate', { name: `deploy key ${s.run}` });
      expect(key.status, JSON.stringify(key.body)).toBe(200);
      const { sshKeyId, publicKey } = key.body as { sshKeyId: string; publicKey: string };
      await sshd.authorize(publicKey);
      const repo = await sshd.createRepo(`ssh-${s.run}`, {
        Dockerfile: 'FROM busybox:latest\nRUN mkdir -p /www && echo "cloned over ssh" > /www/index.html\nCMD ["httpd", "-f", "-p", "8080", "-h", "/www"]\n',
      });
      const port = await freePort();
      const app = await gitApplication('sshweb', repo, {}, published(port));
      const saved = await t.call('application.saveGitProvider', {
        applicationId: app.applicationId,
        customGitUrl: repo.url,
        customGitBranch: 'main',
        customGitBuildPath: '/',
        customGitSSHKeyId: sshKeyId,
        watchPaths: null,
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);

      const result = await s.deployAndWait(app.applicationId);
      const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
      expect(result.status, `${logs.reason}\n${logs.log}\nsshd:\n${sshd.log()}`).toBe('done');
      expect(logs.log).toContain('with the SSH key');
      expect(logs.log).not.toContain('PRIVATE KEY');
      await waitFor(async () => (await page(port)) === 'cloned over ssh', { timeoutMs: 30_000, what: 'the page built from the SSH clone' });
    } finally {
      await sshd.stop();
    }
  }, 300_000);

  it('builds a static site served by caddy, answering index.html for unknown paths', async () => {
    const { t } = s;
    const repo = await git.createRepo(`site-${s.run}`, {
      'public/index.html': '<h1>static site</h1>\n',
      'public/docs/guide.txt': 'the guide\n',
    });
    const app = await gitApplication('static', repo, { buildType: 'static', publishDirectory: 'public', isStaticSpa: true }, {
      endpointSpecCluster: { Mode: 'dnsrr' },
    });
    const result = await s.deployAndWait(app.applicationId);
    const logs = (await t.call('deployment.readLogs', { deploymentId: result.deploymentId })).body;
    expect(result.status, logs.log).toBe('done');
    await waitFor(async () => (await fromInside(app.appName, '/')) === '<h1>static site</h1>', { timeoutMs: 30_000, what: 'the static site' });
    expect(await fromInside(app.appName, '/docs/guide.txt')).toBe('the guide');
    expect(await fromInside(app.appName, '/a/client/route')).toBe('<h1>static site</h1>');
  }, 300_000);

  it('ends in error with the builder\'s reason when the build fails, and with git\'s for a missing branch', async () => {
    const { t } = s;
    const repo = await git.createRepo(`broken-${s.run}`, { Dockerfile: `FROM busybox:latest\nRUN echo "broken ${s.run}" && exit 3\n` });
    const app = await gitApplication('broken', repo, {});
    const failed = await s.deployAndWait(app.applicationId);
    expect(failed.status).toBe('error');
    const logs = (await t.call('deployment.readLogs', { deploymentId: failed.deploymentId })).body;
    expect(logs.reason).toMatch(/^the build failed: .*exit code: 3/);
    expect((await t.call('application.one', { applicationId: app.applicationId })).body.applicationStatus).toBe('error');

    await t.call('application.saveGitProvider', {
      applicationId: app.applicationId,
      customGitUrl: repo.authUrl,
      customGitBranch: 'no-such-branch',
      customGitBuildPath: null,
      watchPaths: null,
    });
    const missing = await s.deployAndWait(app.applicationId);
    expect(missing.status).toBe('error');
    const missingLogs = (await t.call('deployment.readLogs', { deploymentId: missing.deploymentId })).body;
    expect(missingLogs.reason).toMatch(/^git clone failed: .*no-such-branch/);
  }, 300_000);

  it('refuses a git deploy without a repository, naming the field', async () => {
    const { t } = s;
    const created = await t.call('application.create', { name: 'nourl', appName: `nourl-${s.run}`, environmentId: s.environmentId, sourceType: 'git' });
    const res = await t.call('application.deploy', { applicationId: created.body.applicationId });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('customGitUrl');
  });
});
