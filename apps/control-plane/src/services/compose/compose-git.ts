/**
 * Reads one file of a branch of a generic git repository on the control plane (a compose
 * stack's file, for `fetchSourceType` and `loadServices` `fetch`), with the git program:
 *
 *   git clone --depth 1 --single-branch --no-tags --no-checkout --branch=<branch> -- <url> <tmp>/repo
 *   git -C <tmp>/repo cat-file -s  HEAD:<path>      (a file, at most `maxBytes`)
 *   git -C <tmp>/repo cat-file blob HEAD:<path>
 *
 * - The URL and branch are checked first (@skiff/domain refuseGitUrl / refuseGitBranch) and
 *   git gets them as arguments after `--`; nothing goes through a shell.
 * - The repository's host is resolved and each address checked under the source's outbound
 *   policy before git runs, and git is pinned to those addresses with no http redirect
 *   followed (@skiff/outbound pinGitRemote); a refusal names `customGitUrl`.
 * - git runs with @skiff/domain gitEnv: no system or user configuration, no prompt, only the
 *   http(s)/ssh/git transports, ssh without config files, agent or host identities: only the
 *   stack's key, written to a 0600 file in a private temporary directory. An http login in the
 *   URL travels as a header (httpLogin), never as an argument.
 * - Nothing is checked out: the file is read from git's objects, so no symbolic link or path
 *   of the repository can reach the control plane's files.
 * - The whole run has a deadline: git and its children (ssh, remote helpers) are killed with
 *   their process group. The temporary directory is removed whatever happens.
 * - Errors carry git's reason with the URL's login and the key hidden.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitEnv, gitFailure, gitUrlSecrets, httpBasicEnv, httpLogin, refuseGitBranch, refuseGitUrl, sshKeyFileContent } from '@skiff/domain';
import { OutboundRefused, pinGitRemote } from '@skiff/outbound';
import type { GitSource } from '@skiff/proto';
import { Invalid } from '../../errors.js';

export interface GitFileOptions {
  /** Where SSH host keys are pinned (`<data dir>/known_hosts`); default: a throw-away file (each host accepted anew). */
  knownHostsFile?: string;
  /** The deadline of the whole fetch. Default 60 s. */
  timeoutMs?: number;
  /** The largest file read. Default 1 MiB. */
  maxBytes?: number;
}

export const GIT_FETCH_TIMEOUT_MS = 60_000;
export const MAX_COMPOSE_FILE_BYTES = 1024 * 1024;
/** The temporary directories of fetches (removed when each ends). */
export const TEMP_PREFIX = 'skiff-compose-git-';

/** The text of `path` on the source's branch. Bad input (refused URL, failed clone, missing file) is BAD_REQUEST naming its field. */
export async function readGitFile(source: GitSource, path: string, options: GitFileOptions = {}): Promise<string> {
  const urlRefusal = refuseGitUrl(source.url);
  if (urlRefusal) throw Invalid('customGitUrl', urlRefusal);
  const branchRefusal = refuseGitBranch(source.branch);
  if (branchRefusal) throw Invalid('customGitBranch', branchRefusal);

  const deadline = Date.now() + (options.timeoutMs ?? GIT_FETCH_TIMEOUT_MS);
  const maxBytes = options.maxBytes ?? MAX_COMPOSE_FILE_BYTES;
  const secrets = [...gitUrlSecrets(source.url), ...(source.sshPrivateKey.trim() ? [source.sshPrivateKey.trim()] : []), ...(source.httpPassword ? [source.httpPassword] : [])];
  const hide = (text: string) => secrets.reduce((t, s) => t.split(s).join('***'), text);
  const dir = await mkdtemp(join(tmpdir(), TEMP_PREFIX));
  try {
    let sshKeyFile: string | null = null;
    if (source.sshPrivateKey.trim() !== '') {
      sshKeyFile = join(dir, 'id');
      await writeFile(sshKeyFile, sshKeyFileContent(source.sshPrivateKey), { mode: 0o600 });
    }
    const login = httpLogin(source.url);
    const pin = await pinGitRemote(login?.url ?? source.url, { allowPrivate: source.outbound?.allowPrivate ?? false }).catch((err: unknown) => {
      throw err instanceof OutboundRefused ? Invalid('customGitUrl', `the git URL's host is refused: ${hide(err.message)}`) : err;
    });
    let sshConfigFile: string | null = null;
    if (pin.sshConfig) {
      sshConfigFile = join(dir, 'ssh_config');
      await writeFile(sshConfigFile, pin.sshConfig, { mode: 0o600 });
    }
    const env = {
      ...gitEnv({ home: dir, sshKeyFile, sshConfigFile, knownHostsFile: options.knownHostsFile ?? join(dir, 'known_hosts'), path: process.env.PATH }),
      ...(login?.env ?? {}),
      // A forge's token, for the URL's origin only (as the agent gives it).
      ...(source.httpPassword ? (httpBasicEnv(login?.url ?? source.url, source.httpUsername, source.httpPassword) ?? {}) : {}),
    };
    const repo = join(dir, 'repo');
    const run = (args: string[], limit = 64 * 1024) => runGit(args, env, deadline, limit);

    const clone = await run([...pin.configArgs, 'clone', '--depth', '1', '--single-branch', '--no-tags', '--no-checkout', `--branch=${source.branch}`, '--', pin.url, repo]);
    if (clone.timedOut) throw Invalid('customGitUrl', `the clone of ${hide(source.url)} did not finish within ${Math.round((options.timeoutMs ?? GIT_FETCH_TIMEOUT_MS) / 1000)} s`);
    if (clone.code !== 0) {
      const reason = hide(gitFailure(clone.stderr.split('\n')) ?? `exit code ${clone.code}`);
      if (saysBranchNotFound(reason)) throw Invalid('customGitBranch', `no branch ${source.branch} in the repository`);
      throw Invalid('customGitUrl', `git clone failed: ${reason}`);
    }

    const object = `HEAD:${path}`;
    const type = await run(['-C', repo, 'cat-file', '-t', object]);
    if (type.code !== 0 || type.stdout.trim() !== 'blob') {
      throw Invalid('composePath', type.code !== 0 ? `no file ${path} on branch ${source.branch}` : `${path} is not a file on branch ${source.branch}`);
    }
    const size = await run(['-C', repo, 'cat-file', '-s', object]);
    if (size.code !== 0 || Number(size.stdout.trim()) > maxBytes) {
      throw Invalid('composePath', `${path} is larger than ${maxBytes} bytes`);
    }
    const blob = await run(['-C', repo, 'cat-file', 'blob', object], maxBytes + 1);
    if (blob.timedOut || blob.code !== 0) throw Invalid('composePath', `${path} could not be read: ${hide(blob.stderr.trim())}`);
    return blob.stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface GitRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** git with an argument array in its own process group, killed (with its children) at the deadline. Output past `limit` bytes is dropped. */
function runGit(args: string[], env: Record<string, string>, deadline: number, limit: number): Promise<GitRun> {
  return new Promise((resolve) => {
    const child = spawn('git', args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let finished = false;
    const finish = (code: number | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      kill();
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    };
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, Math.max(0, deadline - Date.now()));
    child.stdout.on('data', (chunk: Buffer) => {
      if (outBytes < limit) out.push(chunk);
      outBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errBytes < 64 * 1024) err.push(chunk);
      errBytes += chunk.length;
    });
    // git could not be started (not installed): its reason, as a failed run.
    child.once('error', (e) => {
      err.push(Buffer.from(`fatal: ${e.message}`));
      finish(null);
    });
    child.once('close', (code) => finish(code));
  });
}

/** Whether git's reason is `Remote branch <name> not found` (one pass: `/Remote branch .* not found/` is quadratic). */
function saysBranchNotFound(reason: string): boolean {
  const text = reason.toLowerCase();
  const at = text.indexOf('remote branch ');
  return at >= 0 && text.indexOf(' not found', at + 'remote branch'.length) >= 0;
}
