// A forge's token given with the git source (httpUsername/httpPassword): git clones with it
// from libs/testing's git server (basic auth in front of git http-backend), and the token is
// nowhere but git's environment: not in any process's argv during the clone, not in the
// clone's .git/config, not in the build log.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitSource } from '@skiff/proto';
import { startGitServer, type TestGitRepo, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChildRun } from './child-process.js';
import { fetchGitSource } from './git-source.js';

/** Every program the clone starts, with its arguments and environment, as spawned. */
const spawned = vi.hoisted(() => [] as Array<{ file: string; args: string[]; env: Record<string, string> }>);
vi.mock('./child-process.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./child-process.js')>();
  return {
    ...actual,
    runChild: (run: ChildRun) => {
      spawned.push({ file: run.file, args: [...run.args], env: { ...(run.env as Record<string, string>) } });
      return actual.runChild(run);
    },
  };
});

const run = randomBytes(4).toString('hex');
const token = `ghs_${randomBytes(16).toString('hex')}`;
let git: TestGitServer;
let repo: TestGitRepo;
let work: string;

beforeAll(async () => {
  git = await startGitServer({ auth: { username: 'x-access-token', password: token } });
  repo = await git.createRepo(`forge-login-${run}`, { 'Dockerfile': 'FROM busybox:latest\n' });
  await repo.commit({ 'tagged.txt': 'v1\n' }, { branch: 'release' });
  work = await mkdtemp(join(tmpdir(), 'skiff-forge-login-'));
});
afterAll(async () => {
  await git?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const source = (over: Partial<GitSource> = {}): GitSource => ({
  url: repo.url,
  branch: 'main',
  submodules: false,
  sshPrivateKey: '',
  outbound: { allowPrivate: true },
  httpUsername: 'x-access-token',
  httpPassword: token,
  commit: '',
  ...over,
});

/** Every process's argv seen while `work` runs, sampled every few milliseconds. */
async function argvDuring<T>(work: () => Promise<T>): Promise<{ result: T; argv: string[] }> {
  const seen = new Set<string>();
  let done = false;
  const sample = async () => {
    while (!done) {
      for (const pid of await readdir('/proc').catch(() => [])) {
        if (!/^\d+$/.test(pid)) continue;
        const line = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (line.includes('git')) seen.add(line.replaceAll('\0', ' '));
      }
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const sampler = sample();
  try {
    const result = await work();
    return { result, argv: [...seen] };
  } finally {
    done = true;
    await sampler;
  }
}

async function clone(src: GitSource) {
  const dir = join(work, randomBytes(4).toString('hex'));
  const lines: string[] = [];
  const ctx = { signal: new AbortController().signal, deadline: Date.now() + 30_000, log: async (...l: string[]) => void lines.push(...l), deploymentId: 'dep_forge', dataDir: work };
  const error = await fetchGitSource(src, dir, ctx).then(() => null, (err: unknown) => err as Error);
  return { dir, lines, error };
}

describe("git clones with a forge's token", () => {
  it('clones with the token given through the environment only: not in argv, .git/config or the log', async () => {
    spawned.length = 0;
    const { result, argv } = await argvDuring(() => clone(source()));
    expect(result.error).toBeNull();
    expect(await readFile(join(result.dir, 'Dockerfile'), 'utf8')).toBe('FROM busybox:latest\n');
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    // As spawned: the clone's arguments carry the plain URL; the header is in its environment, for the origin only.
    const gitClone = spawned.find((s) => s.file === 'git' && s.args.includes('clone'));
    expect(gitClone?.args).toContain(repo.url);
    expect(JSON.stringify(gitClone?.args)).not.toContain(token);
    expect(JSON.stringify(gitClone?.args)).not.toContain(basic);
    expect(gitClone?.env).toMatchObject({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `http.${new URL(repo.url).origin}/.extraHeader`,
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
    // And as every process on the machine could read it while the clone ran (/proc/*/cmdline).
    for (const a of argv) {
      expect(a).not.toContain(token);
      expect(a).not.toContain(basic);
    }
    const config = await readFile(join(result.dir, '.git', 'config'), 'utf8');
    expect(config).toContain(repo.url);
    expect(config).not.toContain(token);
    expect(config).not.toContain(basic);
    expect(result.lines.join('\n')).toContain("with the forge's token");
    expect(result.lines.join('\n')).not.toContain(token);
  });

  it('checks out the branch asked for', async () => {
    const { dir, error } = await clone(source({ branch: 'release' }));
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'tagged.txt'), 'utf8')).toBe('v1\n');
  });

  it('fetches submodules on the same origin with the same login, when asked', async () => {
    const lib = await git.createRepo(`forge-lib-${run}`, { 'lib.txt': 'the library\n' });
    const app = await git.createRepo(`forge-app-${run}`, { 'app.txt': 'the app\n' });
    await app.addSubmodule('vendor/lib', lib);
    const { dir, error } = await clone(source({ url: app.url, submodules: true }));
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'vendor', 'lib', 'lib.txt'), 'utf8')).toBe('the library\n');
    expect(await readFile(join(dir, '.git', 'modules', 'vendor', 'lib', 'config'), 'utf8')).not.toContain(token);
  });

  it('fails clearly with a wrong token, without showing it', async () => {
    const wrong = `ghs_${randomBytes(16).toString('hex')}`;
    const { error, lines } = await clone(source({ httpPassword: wrong }));
    expect(error).not.toBeNull();
    expect(error!.message).toMatch(/Authentication failed|could not read Username|401/i);
    expect(`${error!.message}\n${lines.join('\n')}`).not.toContain(wrong);
  });

  it('checks out the commit asked for, an older one than the branch head, fetching it by name', async () => {
    const pinned = await git.createRepo(`forge-pinned-${run}`, { 'version.txt': 'one\n' });
    const older = await pinned.commit({ 'version.txt': 'two\n' });
    await pinned.commit({ 'version.txt': 'three\n' });
    const { dir, error, lines } = await clone(source({ url: pinned.url, commit: older }));
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'version.txt'), 'utf8')).toBe('two\n');
    expect(lines.join('\n')).toContain(`Checking out commit ${older}`);
    expect(lines.join('\n')).toContain(`Cloned commit ${older.slice(0, 7)}`);
    expect(lines.join('\n')).not.toContain(token);
  });

  it("builds the branch's head, saying so, when the server does not give the commit", async () => {
    const missing = randomBytes(20).toString('hex');
    const { dir, error, lines } = await clone(source({ branch: 'release', commit: missing }));
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'tagged.txt'), 'utf8')).toBe('v1\n');
    expect(lines.join('\n')).toContain(`The commit ${missing} could not be fetched`);
    expect(lines.join('\n')).toContain('building the head of branch release instead');
  });

  it('refuses a commit that is not a full hex object name, before running git', async () => {
    spawned.length = 0;
    const { error } = await clone(source({ commit: '--upload-pack=touch /tmp/x' }));
    expect(error?.message).toBe('the commit to build is not a full hex object name');
    expect(spawned).toEqual([]);
  });
});
