// Clones over SSH from a real OpenSSH server on loopback (libs/testing's sshd, public-key
// logins only) with the key a deployment carries: the key lives in a 0600 file for the
// clone's duration only, never reaches the log, and the server's host key is pinned in the
// agent's data directory.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTestSshKey, startSshGitServer, type TestSshGitServer, type TestSshKey } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '@skiff/outbound';
import { BuildError } from './errors.js';
import { fetchGitSource } from './git-source.js';

/** The test git servers listen on loopback: the operator's allowance (SKIFF_OUTBOUND_ALLOW_PRIVATE=1). */
const LOOPBACK_ALLOWED = { allowPrivate: true };

let sshd: TestSshGitServer;
let allowed: TestSshKey;
let stranger: TestSshKey;
let base: string;

beforeAll(async () => {
  sshd = await startSshGitServer();
  [allowed, stranger] = await Promise.all([generateTestSshKey('allowed'), generateTestSshKey('stranger')]);
  await sshd.authorize(allowed.publicKey);
  base = await mkdtemp(join(tmpdir(), 'skiff-ssh-clone-'));
}, 60_000);

afterAll(async () => {
  await sshd?.stop();
  if (base) await rm(base, { recursive: true, force: true });
});

/** The known_hosts lines for `host` (`ssh-keygen -F`), or '' when there are none. */
const knownHost = (file: string, host: string) =>
  new Promise<string>((resolve) => execFile('ssh-keygen', ['-F', host, '-f', file], (_err, out) => resolve(String(out))));

/** Every piece of a private key long enough to give it away: the whole and each base64 line. */
const keyPieces = (key: string) => [key.trim(), ...key.split('\n').filter((l) => l.length >= 20 && !l.startsWith('-----'))];

let counter = 0;
/** A clone with its own data and private directories; answers the log, the error and what the key file looked like. */
async function clone(url: string, privateKey: string, knownHosts?: string, resolver?: Resolver) {
  const n = ++counter;
  const dataDir = join(base, `data-${n}`);
  const privateDir = join(base, `private-${n}`);
  await mkdir(dataDir);
  if (knownHosts !== undefined) await writeFile(join(dataDir, 'known_hosts'), knownHosts);
  await mkdir(privateDir, { mode: 0o700 });
  const dir = join(base, `checkout-${n}`);
  const lines: string[] = [];
  const keyFiles: { path: string; mode: number; content: string }[] = [];
  const log = async (...l: string[]) => {
    lines.push(...l);
    // The clone announces itself once the key is written: look at the key file then.
    if (l.some((x) => x.startsWith('Cloning ') && !x.startsWith('Cloning into'))) {
      for (const sub of await readdir(privateDir)) {
        for (const file of await readdir(join(privateDir, sub))) {
          const path = join(privateDir, sub, file);
          keyFiles.push({ path, mode: (await stat(path)).mode & 0o777, content: await readFile(path, 'utf8') });
        }
      }
    }
  };
  const error = await fetchGitSource(
    { url, branch: 'main', submodules: false, sshPrivateKey: privateKey, httpUsername: '', httpPassword: '', commit: '', outbound: LOOPBACK_ALLOWED },
    dir,
    { signal: new AbortController().signal, deadline: Date.now() + 60_000, log, deploymentId: `dep_ssh_${n}`, dataDir, privateDir, resolver },
  ).then(
    () => null,
    (err: unknown) => err as Error,
  );
  return { dir, dataDir, privateDir, lines, error, keyFiles };
}

describe('git over SSH', () => {
  it('clones with the right key from a 0600 file that is gone afterwards, and pins the host key', async () => {
    const repo = await sshd.createRepo('app', { 'page.txt': 'over ssh\n' });
    expect(repo.url).toMatch(/^ssh:\/\/root@127\.0\.0\.1:\d+\/.+\/app\.git$/);

    const result = await clone(repo.url, allowed.privateKey);
    expect(result.error, `${result.error?.message}\n${result.lines.join('\n')}\nsshd:\n${sshd.log()}`).toBeNull();
    expect(await readFile(join(result.dir, 'page.txt'), 'utf8')).toBe('over ssh\n');

    const log = result.lines.join('\n');
    // The user part of a URL is never shown (for http it may be a login).
    expect(log).toContain(`Cloning ${repo.url.replace('ssh://root@', 'ssh://***@')} (branch main, with the SSH key)`);
    expect(log).toMatch(/Cloned commit [0-9a-f]{7}/);
    for (const piece of keyPieces(allowed.privateKey)) expect(log).not.toContain(piece);

    // During the clone: one key file, owner-only, holding the key.
    expect(result.keyFiles).toHaveLength(1);
    expect(result.keyFiles[0]!.mode).toBe(0o600);
    expect(result.keyFiles[0]!.content.trim()).toBe(allowed.privateKey.trim());
    // After it: nothing left in the private directory.
    expect(await readdir(result.privateDir)).toEqual([]);

    // The server's host key, accepted on first use, is pinned under the data directory.
    // (Debian's ssh_config hashes host names: ssh-keygen -F finds the entry either way.)
    const pinned = await knownHost(join(result.dataDir, 'known_hosts'), `[127.0.0.1]:${sshd.port}`);
    expect(pinned).toContain(sshd.hostPublicKey);

    // A second clone with the pinned key works as well.
    const again = await clone(repo.url, allowed.privateKey);
    expect(again.error).toBeNull();
  }, 60_000);

  it('connects ssh to the checked address of a name (pinned with an ssh_config), host key kept under the name', async () => {
    const repo = await sshd.createRepo('named', { 'page.txt': 'pinned over ssh\n' });
    const name = 'sshd.skiff.test';
    const asked: string[] = [];
    const resolver: Resolver = async (host) => (asked.push(host), host === name ? ['127.0.0.1'] : []);
    const url = repo.url.replace('@127.0.0.1:', `@${name}:`);
    const result = await clone(url, allowed.privateKey, undefined, resolver);
    expect(result.error, `${result.error?.message}\n${result.lines.join('\n')}`).toBeNull();
    expect(await readFile(join(result.dir, 'page.txt'), 'utf8')).toBe('pinned over ssh\n');
    expect(asked).toEqual([name]);
    expect(await knownHost(join(result.dataDir, 'known_hosts'), name)).toContain(sshd.hostPublicKey);
    expect(await readdir(result.privateDir)).toEqual([]);

    const refused = await fetchGitSource(
      { url, branch: 'main', submodules: false, sshPrivateKey: allowed.privateKey, httpUsername: '', httpPassword: '', commit: '' },
      join(base, 'refused'),
      { signal: new AbortController().signal, deadline: Date.now() + 60_000, log: async () => {}, deploymentId: 'dep_ssh_refused', dataDir: result.dataDir, privateDir: result.privateDir, resolver },
    ).then(() => null, (err: unknown) => err as Error);
    expect(refused?.message).toBe(
      "the git URL's host is refused: sshd.skiff.test resolves to 127.0.0.1: loopback addresses (127.0.0.0/8) are refused (the operator allows them with SKIFF_OUTBOUND_ALLOW_PRIVATE=1)",
    );
  }, 60_000);

  it('fails naming the refused login with a wrong key, without showing the key, and removes it', async () => {
    const repo = await sshd.createRepo('private', { 'a.txt': 'a\n' });
    const result = await clone(repo.url, stranger.privateKey);
    expect(result.error).toBeInstanceOf(BuildError);
    expect(result.error!.message).toMatch(/^git clone failed: .*Permission denied \(publickey\)/);
    const everything = `${result.error!.message}\n${result.lines.join('\n')}`;
    for (const piece of keyPieces(stranger.privateKey)) expect(everything).not.toContain(piece);
    expect(result.keyFiles).toHaveLength(1);
    expect(await readdir(result.privateDir)).toEqual([]);
  }, 60_000);

  it('refuses a server whose host key changed since it was pinned', async () => {
    const repo = await sshd.createRepo('moved', { 'a.txt': 'a\n' });
    const impostor = (await generateTestSshKey('impostor')).publicKey.split(' ').slice(0, 2).join(' ');
    const result = await clone(repo.url, allowed.privateKey, `[127.0.0.1]:${sshd.port} ${impostor}\n`);
    expect(result.error).toBeInstanceOf(BuildError);
    expect(result.error!.message).toMatch(/^git clone failed: .*Host key verification failed/);
    expect(await readdir(result.privateDir)).toEqual([]);
  }, 60_000);

  it('fails without a key: the server takes no passwords and git never prompts', async () => {
    const repo = await sshd.createRepo('nokey', { 'a.txt': 'a\n' });
    const started = Date.now();
    const result = await clone(repo.url, '');
    expect(result.error).toBeInstanceOf(BuildError);
    expect(result.error!.message).toMatch(/Permission denied/);
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
