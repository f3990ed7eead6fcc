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
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchGitSource } from './git-source.js';

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
    const { result, argv } = await argvDuring(() => clone(source()));
    expect(result.error).toBeNull();
    expect(await readFile(join(result.dir, 'Dockerfile'), 'utf8')).toBe('FROM busybox:latest\n');
    expect(argv.some((a) => a.includes('clone'))).toBe(true);
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
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

  it('fails clearly with a wrong token, without showing it', async () => {
    const wrong = `ghs_${randomBytes(16).toString('hex')}`;
    const { error, lines } = await clone(source({ httpPassword: wrong }));
    expect(error).not.toBeNull();
    expect(error!.message).toMatch(/Authentication failed|could not read Username|401/i);
    expect(`${error!.message}\n${lines.join('\n')}`).not.toContain(wrong);
  });
});
