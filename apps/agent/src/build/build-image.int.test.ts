// Builds against the real Docker Engine (BuildKit through Debian's docker CLI) from a git
// repository served over HTTP on loopback (libs/testing's git server, with basic auth).
// Images and containers are named for this run and removed afterwards.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildType, type BuildRecipe, type BuildSource } from '@skiff/proto';
import { startGitServer, type TestGitRepo, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AbandonedError } from '../abort/abandoned.js';
import { waitUntil } from '../testing/wait.js';
import { buildImage, type ImageBuild } from './build-image.js';
import { HIDDEN_LINE } from './build-log.js';
import { BuildError } from './errors.js';
import { fetchGitSource } from './git-source.js';
import { dockerCliOf, type BuildSettings } from './settings.js';

/** The test git servers listen on loopback: the operator's allowance (SKIFF_OUTBOUND_ALLOW_PRIVATE=1). */
const LOOPBACK_ALLOWED = { allowPrivate: true };

const run = randomBytes(4).toString('hex');
const dockerCli = dockerCliOf(null);
const USER = 'builder';
const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const SECRET = `s3cr3t-${randomBytes(12).toString('hex')}`;

let git: TestGitServer;
let dataDir: string;
let settings: BuildSettings;
const images = new Set<string>();
const containers = new Set<string>();

const docker = (args: string[], options: { encoding?: 'buffer' } = {}) =>
  new Promise<{ ok: boolean; out: string; raw: Buffer }>((resolve) =>
    execFile(dockerCli, args, { maxBuffer: 256 * 1024 * 1024, encoding: 'buffer', ...options }, (err, stdout) =>
      resolve({ ok: !err, out: stdout.toString('utf8').trim(), raw: stdout }),
    ),
  );

const gitSource = (repo: TestGitRepo, overrides: Partial<{ branch: string; submodules: boolean }> = {}): BuildSource => ({
  kind: { $case: 'git', value: { url: repo.authUrl, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED, ...overrides } },
});

const recipe = (overrides: Partial<BuildRecipe> = {}): BuildRecipe => ({
  type: BuildType.BUILD_TYPE_CONTAINERFILE,
  buildPath: '',
  containerfile: '',
  contextPath: '',
  buildStage: '',
  buildArgs: {},
  buildSecrets: {},
  publishDirectory: '',
  staticSpa: false,
  builderVersion: '',
  ...overrides,
});

let counter = 0;
/** Runs buildImage with a fresh image name; answers the image and every log line. */
async function build(source: BuildSource, r: BuildRecipe, extra: Partial<ImageBuild> = {}) {
  const image = `skiff-build-test-${run}:b${++counter}`;
  images.add(image);
  const lines: string[] = [];
  const deploymentId = `dep_${run}_${counter}`;
  const outcome = await buildImage({
    settings,
    deploymentId,
    source,
    recipe: r,
    image,
    labels: { 'skiff.managed': 'true', 'skiff.kind': 'application', 'skiff.id': `app_${run}` },
    signal: new AbortController().signal,
    deadline: Date.now() + 120_000,
    log: async (...l) => void lines.push(...l),
    ...extra,
  }).then(
    () => null,
    (err: unknown) => err,
  );
  return { image, lines, error: outcome, deploymentId };
}

/**
 * Runs the image as a container without a network and asks it over its own loopback
 * (`docker exec … wget`): this machine's egress filter intercepts connections to port 80,
 * and the sites listen there.
 */
async function serve(image: string) {
  const name = `skiff-build-test-${run}-${++counter}`;
  containers.add(name);
  const started = await docker(['run', '-d', '--name', name, '--network', 'none', '--label', 'skiff.test=build-image', image]);
  expect(started.ok, started.out).toBe(true);
  const get = async (path: string) => {
    const res = await new Promise<{ out: string; err: string }>((resolve) =>
      execFile(dockerCli, ['exec', name, 'wget', '-S', '-O', '-', `http://127.0.0.1${path}`], (_e, out, err) =>
        resolve({ out: String(out), err: String(err) }),
      ),
    );
    const status = /HTTP\/[\d.]+ (\d{3})/.exec(res.err)?.[1];
    return status ? { status: Number(status), body: res.out.trim() } : null;
  };
  await waitUntil(`${image} to answer`, () => get('/'), 20_000, 100);
  return get;
}

beforeAll(async () => {
  git = await startGitServer({ auth: { username: USER, password: PASSWORD } });
  dataDir = await mkdtemp(join(tmpdir(), 'skiff-build-test-'));
  settings = { dataDir, dockerCli, dockerSocket: '/var/run/docker.sock', timeoutMs: 120_000 };
});

afterAll(async () => {
  for (const name of containers) await docker(['rm', '-f', name]);
  for (const image of images) await docker(['image', 'rm', '-f', image]);
  await git?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('git sources', () => {
  it('clones the branch asked for, with submodules, and never logs the URL login', async () => {
    const lib = await git.createRepo(`lib-${run}`, { 'lib.txt': 'from the submodule\n' });
    const repo = await git.createRepo(`app-${run}`, { 'page.txt': 'main branch\n' });
    await repo.commit({ 'page.txt': 'dev branch\n' }, { branch: 'dev' });
    await repo.addSubmodule('vendor/lib', lib);

    const dir = await mkdtemp(join(tmpdir(), 'skiff-clone-'));
    const lines: string[] = [];
    const ctx = { signal: new AbortController().signal, deadline: Date.now() + 60_000, log: async (...l: string[]) => void lines.push(...l), deploymentId: 'dep_clone', dataDir };
    try {
      await fetchGitSource({ url: repo.authUrl, branch: 'main', submodules: true, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED }, join(dir, 'main'), ctx);
      expect(await readFile(join(dir, 'main', 'page.txt'), 'utf8')).toBe('main branch\n');
      expect(await readFile(join(dir, 'main', 'vendor/lib/lib.txt'), 'utf8')).toBe('from the submodule\n');

      await fetchGitSource({ url: repo.authUrl, branch: 'dev', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED }, join(dir, 'dev'), ctx);
      expect(await readFile(join(dir, 'dev', 'page.txt'), 'utf8')).toBe('dev branch\n');
      expect(existsSync(join(dir, 'dev', 'vendor'))).toBe(false);

      // The login is in no file of the clone (a `COPY . .` would put it in the image).
      for (const config of ['main/.git/config', 'main/.git/modules/vendor/lib/config', 'dev/.git/config']) {
        const text = await readFile(join(dir, config), 'utf8');
        expect(text, config).not.toContain(PASSWORD);
        expect(text, config).toContain('url = http://127.0.0.1');
      }

      const log = lines.join('\n');
      expect(log).toContain('Cloning http://***@127.0.0.1');
      expect(log).toMatch(/Cloned commit [0-9a-f]{7}/);
      expect(log).not.toContain(PASSWORD);
      expect(log).not.toContain(`${USER}:`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails with git\'s reason for a missing branch, and for a wrong login without showing it', async () => {
    const repo = await git.createRepo(`missing-${run}`, { 'a.txt': 'a\n' });
    const missing = await build(gitSource(repo, { branch: 'nope' }), recipe());
    expect(missing.error).toBeInstanceOf(BuildError);
    expect((missing.error as Error).message).toMatch(/^git clone failed: .*nope/);

    const wrong = repo.authUrl.replace(PASSWORD, 'wrong-password-123');
    const refused = await build({ kind: { $case: 'git', value: { url: wrong, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED } } }, recipe());
    expect(refused.error).toBeInstanceOf(BuildError);
    expect((refused.error as Error).message).toMatch(/^git clone failed/);
    expect(`${(refused.error as Error).message}\n${refused.lines.join('\n')}`).not.toContain('wrong-password-123');
  });

  it('refuses transports other than http(s), ssh and git before running git', async () => {
    for (const url of ['ext::sh -c touch% /tmp/pwned', 'file:///etc', '--upload-pack=touch /tmp/pwned', '/srv/repo.git', 'fd::17']) {
      const result = await build({ kind: { $case: 'git', value: { url, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED } } }, recipe());
      expect(result.error, url).toBeInstanceOf(BuildError);
    }
    const dashBranch = await build(
      { kind: { $case: 'git', value: { url: 'http://127.0.0.1:1/x.git', branch: '--upload-pack=x', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED } } },
      recipe(),
    );
    expect((dashBranch.error as Error).message).toContain('must not start with "-"');
  });
});

describe('containerfile builds', () => {
  it('builds with build args and a build secret that reaches neither the log, the history nor the layers', async () => {
    const repo = await git.createRepo(`cf-${run}`, {
      'app/Containerfile.web': [
        'FROM busybox:latest AS base',
        'ARG GREETING',
        // Unique to the run: BuildKit's cache ignores secret values and would skip the step.
        `RUN --mount=type=secret,id=API_TOKEN echo "run ${run}: token is $(cat /run/secrets/API_TOKEN)" && cat /run/secrets/API_TOKEN | wc -c > /token-length`,
        'RUN mkdir -p /www && echo "$GREETING from the repo" > /www/index.html',
        'CMD ["httpd", "-f", "-p", "80", "-h", "/www"]',
        'FROM base AS other',
        'RUN echo other > /www/index.html',
        '',
      ].join('\n'),
    });
    const result = await build(
      gitSource(repo),
      recipe({
        buildPath: 'app',
        containerfile: 'Containerfile.web',
        buildStage: 'base',
        buildArgs: { GREETING: 'Hello' },
        buildSecrets: { API_TOKEN: SECRET },
      }),
    );
    expect(result.error).toBeNull();
    const log = result.lines.join('\n');
    expect(log).toContain(`Built image ${result.image}`);
    expect(log).not.toContain(SECRET);
    expect(result.lines).toContain(HIDDEN_LINE);

    const history = await docker(['history', '--no-trunc', result.image]);
    expect(history.ok).toBe(true);
    expect(history.out).not.toContain(SECRET);
    const inspect = await docker(['image', 'inspect', result.image]);
    expect(inspect.out).not.toContain(SECRET);
    expect(JSON.parse(inspect.out)[0].Config.Labels).toMatchObject({ 'skiff.managed': 'true', 'skiff.id': `app_${run}` });
    const saved = await docker(['image', 'save', result.image]);
    expect(saved.raw.length).toBeGreaterThan(1000);
    expect(saved.raw.includes(Buffer.from(SECRET))).toBe(false);

    const get = await serve(result.image);
    expect(await get('/')).toEqual({ status: 200, body: 'Hello from the repo' });
  });

  it('ends with the builder\'s reason when a step fails, and leaves no work directory', async () => {
    const repo = await git.createRepo(`fail-${run}`, { Dockerfile: 'FROM busybox:latest\nRUN echo about to fail && exit 7\n' });
    const result = await build(gitSource(repo), recipe());
    expect(result.error).toBeInstanceOf(BuildError);
    expect((result.error as Error).message).toMatch(/^the build failed: .*exit code: 7/);
    expect(result.lines.join('\n')).toContain('about to fail');
    expect(await readdir(join(dataDir, 'builds'))).toEqual([]);
  });

  it('refuses paths that leave the source, by .. or through links', async () => {
    const repo = await git.createRepo(`paths-${run}`, {
      Dockerfile: 'FROM busybox:latest\n',
      'sub/keep.txt': 'x\n',
      'evil-file': { link: '/etc/passwd' },
      'evil-dir': { link: '../../..' },
      'fine-link': { link: 'sub' },
    });
    const reasons = async (r: Partial<BuildRecipe>) => ((await build(gitSource(repo), recipe(r))).error as Error).message;
    expect(await reasons({ buildPath: '../..' })).toBe('build path "../.." must stay inside the source (no ..)');
    expect(await reasons({ containerfile: 'sub/../../../etc/passwd' })).toContain('must stay inside the source');
    expect(await reasons({ contextPath: 'nowhere' })).toBe('context path "nowhere" does not exist in the source');
    expect(await reasons({ containerfile: 'evil-file' })).toBe('containerfile "evil-file" leads outside the source (through a link)');
    expect(await reasons({ contextPath: 'evil-dir' })).toBe('context path "evil-dir" leads outside the source (through a link)');
    expect(await reasons({ type: BuildType.BUILD_TYPE_STATIC, publishDirectory: 'evil-dir' })).toBe(
      'publish directory "evil-dir" leads outside the source (through a link)',
    );
    expect(await reasons({ containerfile: 'sub' })).toBe('containerfile "sub" is not a file');
    // A link that stays inside is fine.
    const fine = await build(gitSource(repo), recipe({ contextPath: 'fine-link' }));
    expect(fine.error).toBeNull();
  });

  it('kills the build at once when its signal aborts', async () => {
    const repo = await git.createRepo(`slow-${run}`, { Dockerfile: `FROM busybox:latest\nRUN echo slow-${run} && sleep 600\n` });
    const abort = new AbortController();
    const lines: string[] = [];
    const pending = build(gitSource(repo), recipe(), {
      signal: abort.signal,
      log: async (...l) => {
        lines.push(...l);
        // BuildKit's plain output of the RUN step's own echo: `#6 0.301 slow-…`.
        if (l.some((x) => new RegExp(`^#\\d+ [\\d.]+ slow-${run}$`).test(x))) abort.abort();
      },
    });
    const started = Date.now();
    const result = await pending;
    expect(result.error).toBeInstanceOf(AbandonedError);
    expect(lines.some((l) => l.includes('sleep 600'))).toBe(true);
    expect(Date.now() - started).toBeLessThan(60_000);
    // The builder is gone: no docker build of this run is left running.
    await waitUntil('the build process to be gone', async () => {
      const ps = await new Promise<string>((resolve) => execFile('ps', ['-eo', 'args'], (_e, out) => resolve(String(out))));
      return !ps.split('\n').some((l) => l.includes(result.image));
    }, 10_000, 100);
    expect(await readdir(join(dataDir, 'builds'))).toEqual([]);
  });
});

describe('static builds', () => {
  it('serves the publish directory from caddy:2, with index.html for unknown paths when it is a SPA', async () => {
    const repo = await git.createRepo(`static-${run}`, {
      'site/dist/index.html': '<p>static home</p>\n',
      'site/dist/about.txt': 'about us\n',
      'site/src/secret.txt': 'not published\n',
    });
    const spa = await build(gitSource(repo), recipe({ type: BuildType.BUILD_TYPE_STATIC, buildPath: 'site', publishDirectory: 'dist', staticSpa: true }));
    expect(spa.error).toBeNull();
    const get = await serve(spa.image);
    expect(await get('/')).toEqual({ status: 200, body: '<p>static home</p>' });
    expect(await get('/about.txt')).toEqual({ status: 200, body: 'about us' });
    expect(await get('/some/client/route')).toEqual({ status: 200, body: '<p>static home</p>' });
    expect((await get('/secret.txt'))?.body).toBe('<p>static home</p>');

    const plain = await build(gitSource(repo), recipe({ type: BuildType.BUILD_TYPE_STATIC, buildPath: 'site', publishDirectory: 'dist' }));
    expect(plain.error).toBeNull();
    const getPlain = await serve(plain.image);
    expect((await getPlain('/some/client/route'))?.status).toBe(404);
  });
});

describe('external builders', () => {
  it('fails naming the program when it is not installed', async () => {
    const repo = await git.createRepo(`ext-${run}`, { 'index.js': 'console.log(1)\n' });
    const emptyPath = await mkdtemp(join(tmpdir(), 'skiff-empty-path-'));
    try {
      const cases: [BuildType, string][] = [
        [BuildType.BUILD_TYPE_PACK_ONE, 'nixpacks is not installed on this server (needed by build type pack_one)'],
        [BuildType.BUILD_TYPE_PACK_TWO, 'railpack is not installed on this server (needed by build type pack_two)'],
        [BuildType.BUILD_TYPE_LEGACY_BUILDPACKS, 'pack is not installed on this server (needed by build type legacy_buildpacks)'],
        [BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS, 'pack is not installed on this server (needed by build type cloudnative_buildpacks)'],
      ];
      for (const [type, message] of cases) {
        const result = await build(gitSource(repo), recipe({ type }), { settings: { ...settings, path: emptyPath } });
        expect((result.error as Error).message).toBe(message);
      }
    } finally {
      await rm(emptyPath, { recursive: true, force: true });
    }
  });
});
