// The outbound rules of git clones (@skiff/outbound), against libs/testing's git server on
// loopback and a redirecting HTTP server: the host is resolved and checked before git runs,
// git connects to the checked address only, and follows no redirect.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Resolver } from '@skiff/outbound';
import type { GitSource } from '@skiff/proto';
import { startGitServer, type TestGitRepo, type TestGitServer } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildError } from './errors.js';
import { fetchGitSource } from './git-source.js';

const run = randomBytes(4).toString('hex');
let git: TestGitServer;
let repo: TestGitRepo;
let work: string;
let redirector: Server;
let redirectorPort: number;
const redirected: string[] = [];

beforeAll(async () => {
  git = await startGitServer();
  repo = await git.createRepo(`outbound-${run}`, { 'page.txt': 'pinned\n' });
  work = await mkdtemp(join(tmpdir(), 'skiff-outbound-'));
  // Sends every request on to the real repository: a clone through it works only if git follows redirects.
  redirector = createServer((req, res) => {
    redirected.push(req.url ?? '');
    res.writeHead(302, { location: `${repo.url}${(req.url ?? '').replace(/^\/moved\.git/, '')}` }).end();
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  redirectorPort = (redirector.address() as AddressInfo).port;
});
afterAll(async () => {
  redirector?.closeAllConnections();
  await new Promise<void>((resolve) => (redirector ? redirector.close(() => resolve()) : resolve()));
  await git?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

const source = (url: string, outbound?: GitSource['outbound']): GitSource => ({ url, branch: 'main', submodules: false, sshPrivateKey: '', httpUsername: '', httpPassword: '', commit: '', outbound });

async function clone(src: GitSource, resolver?: Resolver) {
  const dir = join(work, randomBytes(4).toString('hex'));
  const lines: string[] = [];
  const ctx = { signal: new AbortController().signal, deadline: Date.now() + 30_000, log: async (...l: string[]) => void lines.push(...l), deploymentId: 'dep_outbound', dataDir: work, resolver };
  const error = await fetchGitSource(src, dir, ctx).then(() => null, (err: unknown) => err as Error);
  return { dir, lines, error };
}

const onLocalhost = (url: string) => url.replace('//127.0.0.1:', '//localhost:');

describe('git clones and the outbound policy', () => {
  it('refuses a host name that resolves to loopback before git runs, naming the address and the rule', async () => {
    for (const outbound of [undefined, { allowPrivate: false }]) {
      const { dir, lines, error } = await clone(source(onLocalhost(repo.url), outbound));
      expect(error).toBeInstanceOf(BuildError);
      expect(error!.message).toBe(
        "the git URL's host is refused: localhost resolves to 127.0.0.1: loopback addresses (127.0.0.0/8) are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)",
      );
      // git never started: nothing was logged, nothing cloned.
      expect(lines).toEqual([]);
      expect(existsSync(dir)).toBe(false);
    }
    const literal = await clone(source(repo.url));
    expect(literal.error!.message).toMatch(/127\.0\.0\.1: loopback addresses/);
  });

  it('clones from loopback when the operator allows private destinations', async () => {
    const { dir, error } = await clone(source(onLocalhost(repo.url), { allowPrivate: true }));
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'page.txt'), 'utf8')).toBe('pinned\n');
  });

  it('connects git to the checked address only: a name only the injected resolver knows clones', async () => {
    const name = `repo-${run}.skiff.test`;
    const asked: string[] = [];
    const resolver: Resolver = async (host) => (asked.push(host), host === name ? ['127.0.0.1'] : []);
    const { dir, error } = await clone(source(repo.url.replace('//127.0.0.1:', `//${name}:`), { allowPrivate: true }), resolver);
    expect(error).toBeNull();
    expect(await readFile(join(dir, 'page.txt'), 'utf8')).toBe('pinned\n');
    expect(asked).toEqual([name]);
  });

  it('refuses a name whose answer mixes a public and a private address', async () => {
    const resolver: Resolver = async () => ['93.184.216.34', '127.0.0.1'];
    const { error, lines } = await clone(source(repo.url.replace('//127.0.0.1:', '//mixed.skiff.test:')), resolver);
    expect(error!.message).toBe(
      "the git URL's host is refused: mixed.skiff.test resolves to 127.0.0.1: loopback addresses (127.0.0.0/8) are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)",
    );
    expect(lines).toEqual([]);
  });

  it('does not follow an HTTP redirect to another repository', async () => {
    redirected.length = 0;
    const { dir, error } = await clone(source(`http://127.0.0.1:${redirectorPort}/moved.git`, { allowPrivate: true }));
    expect(error).toBeInstanceOf(BuildError);
    expect(error!.message).toMatch(/^git clone failed/);
    expect(existsSync(join(dir, 'page.txt'))).toBe(false);
    // One request, answered with the redirect (following it would have cloned the repository).
    expect(redirected).toEqual(['/moved.git/info/refs?service=git-upload-pack']);
  });
});
