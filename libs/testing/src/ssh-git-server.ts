/**
 * Git over SSH for tests: OpenSSH's `sshd` (`/usr/sbin/sshd -D -e -f <config>`) on a free
 * loopback port, with its own host key and an authorized_keys file the test fills
 * (`authorize()`), serving the bare repositories of one temporary directory as root (tests
 * run as root): `ssh://root@127.0.0.1:<port>/<dir>/repos/<name>.git`. Repositories are
 * written as the HTTP git server's are (git-server.ts `createRepoStore`). tools/test installs
 * OpenSSH (`ensure_ssh_packages` in tools/lib/services.sh).
 *
 * Only public-key logins: no passwords, no PAM. StrictModes is off so the temporary files
 * need no particular ownership.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { createRepoStore, type RepoFiles, type TestGitRepo } from './git-server.js';
import { waitFor } from './wait-for.js';
import { spawnOwned } from './owned-process.js';

export interface TestSshGitServer {
  port: number;
  /** The host key sshd presents, as `ssh-ed25519 AAAA…` (without a comment). */
  hostPublicKey: string;
  /** Lets the holder of this public key (an authorized_keys line) log in as root. */
  authorize(publicKey: string): Promise<void>;
  /** A new repository (bare, default branch `main`) with its first commit; `url` is the ssh:// URL. */
  createRepo(name: string, files: RepoFiles): Promise<TestGitRepo>;
  /** sshd's own log (stderr), for diagnostics. */
  log(): string;
  /** Stops sshd and removes every file of the server. */
  stop(): Promise<void>;
}

export interface TestSshKey {
  /** OpenSSH private key (no passphrase). A secret: never log it. */
  privateKey: string;
  /** authorized_keys line. */
  publicKey: string;
}

const SSHD = '/usr/sbin/sshd';
const STEP_TIMEOUT_MS = 30_000;
/** sshd refuses to start without its privilege separation directory (compiled in). */
const PRIVSEP_DIR = '/run/sshd';

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: STEP_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} failed: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout));
    });
  });
}

/** A new ed25519 key pair made by ssh-keygen (in a temporary directory removed at once). */
export async function generateTestSshKey(comment = 'skiff-test'): Promise<TestSshKey> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-ssh-key-'));
  try {
    const file = join(dir, 'id');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
    return { privateKey: await readFile(file, 'utf8'), publicKey: (await readFile(`${file}.pub`, 'utf8')).trim() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** True when something on 127.0.0.1:<port> greets with an SSH banner (`SSH-2.0-…`). */
function sshAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once('error', () => done(false));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
      if (data.length >= 8) done(data.startsWith('SSH-2.0-'));
    });
    socket.once('end', () => done(false));
  });
}

function sshdConfig(dir: string, port: number): string {
  return [
    `ListenAddress 127.0.0.1:${port}`,
    `HostKey ${join(dir, 'host_ed25519')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    'PermitRootLogin prohibit-password',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no',
    'AllowTcpForwarding no',
    'X11Forwarding no',
    'PrintMotd no',
    'LogLevel VERBOSE',
    '',
  ].join('\n');
}

export async function startSshGitServer(): Promise<TestSshGitServer> {
  if (!existsSync(SSHD)) throw new Error(`${SSHD} not found: install openssh-server (tools/test does)`);
  const dir = await mkdtemp(join(tmpdir(), 'skiff-ssh-git-'));
  try {
    await mkdir(PRIVSEP_DIR, { recursive: true, mode: 0o755 });
    await mkdir(join(dir, 'repos'));
    await mkdir(join(dir, 'work'));
    await writeFile(join(dir, 'authorized_keys'), '', { mode: 0o600 });
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'skiff-test-host', '-f', join(dir, 'host_ed25519')]);
    const hostPublicKey = (await readFile(join(dir, 'host_ed25519.pub'), 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ');
    return await launch(dir, hostPublicKey);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function launch(dir: string, hostPublicKey: string): Promise<TestSshGitServer> {
  // A port found free may be taken before sshd binds it: try another then.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const configFile = join(dir, 'sshd_config');
    await writeFile(configFile, sshdConfig(dir, port));
    const child = spawnOwned(SSHD, ['-D', '-e', '-f', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output = (output + chunk).slice(-8000)));
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    child.once('error', (err) => (output += `\n${err.message}`));
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`sshd exited with ${child.exitCode ?? child.signalCode}: ${output.trim()}`);
          return sshAnswers(port);
        },
        { timeoutMs: 20_000, intervalMs: 50, what: `the test sshd on 127.0.0.1:${port} to answer` },
      );
    } catch (err) {
      lastError = err;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      continue;
    }

    const root = join(dir, 'repos');
    const store = createRepoStore({
      dir,
      root,
      work: join(dir, 'work'),
      urls: (name) => {
        const url = `ssh://root@127.0.0.1:${port}${join(root, `${name}.git`)}`;
        return { url, authUrl: url };
      },
    });
    return {
      port,
      hostPublicKey,
      authorize: (publicKey) => appendFile(join(dir, 'authorized_keys'), `${publicKey.trim()}\n`),
      createRepo: (name, files) => store.createRepo(name, files),
      log: () => output,
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const killed = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000).unref())]);
          if (!killed) {
            child.kill('SIGKILL');
            await exited;
          }
        }
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  throw lastError;
}
