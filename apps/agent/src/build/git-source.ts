/**
 * A shallow clone of one branch of a generic git repository (and, when asked, its
 * submodules), with the git program:
 *
 *   git clone --progress --depth 1 --branch=<branch> [--recurse-submodules --shallow-submodules] -- <url> <dir>
 *
 * - Argument arrays only; the URL and the branch are checked first, as the control plane
 *   checked them when they were saved (@skiff/domain refuseGitUrl / refuseGitBranch: no
 *   leading `-`, no `<transport>::` remote helpers such as `ext::`, only http(s), ssh, git
 *   and scp-like `user@host:path` URLs, no link-local or cloud-metadata host), and
 *   GIT_ALLOW_PROTOCOL=http:https:ssh:git holds for submodules too (no `file://`, no `ext::`).
 * - git runs without the system's or the user's configuration, never prompts
 *   (GIT_TERMINAL_PROMPT=0, ssh BatchMode), and new SSH hosts are accepted once and then
 *   pinned in `<agent data>/known_hosts`.
 * - An SSH private key is written to a 0600 file in the build's private directory and
 *   removed after the clone, whatever happens.
 * - Credentials in an http URL never reach the log: URLs are shown as `https://***@host/…`
 *   and any line carrying the user name or password is hidden.
 * - The deadline and the signal kill git and its children (ssh, remote helpers).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuseGitBranch, refuseGitUrl } from '@skiff/domain';
import type { GitSource } from '@skiff/proto';
import { AbandonedError } from '../commands/handler.js';
import { BuildLog, redactUrlCredentials } from './build-log.js';
import { runChild } from './child-process.js';
import { BuildError } from './errors.js';
import type { SourceContext } from './source.js';
import { runLoggedProgram } from './logged-program.js';

/** Shell-safe characters for paths placed in GIT_SSH_COMMAND (our own paths, never user text). */
const SAFE_PATH = /^[A-Za-z0-9._/-]+$/;

/** The URL as it may be shown. */
export const displayUrl = (url: string) => redactUrlCredentials(url);

/** The login an http(s) URL carries, in the forms git may print it, to hide from the log. */
function urlSecrets(url: string): string[] {
  try {
    const { username, password, protocol } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') return [];
    return [username, password, decodeURIComponent(username), decodeURIComponent(password)].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

/**
 * An http(s) URL's login as git configuration given through the environment (an
 * `Authorization: Basic` header for that origin only, so submodules elsewhere never get it),
 * and the URL without it; null when the URL carries none.
 */
export function httpLogin(raw: string): { url: string; env: Record<string, string> } | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.username === '' && url.password === '')) return null;
  const basic = Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  url.username = '';
  url.password = '';
  return {
    url: url.toString(),
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `http.${url.origin}/.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` },
  };
}

export async function fetchGitSource(source: GitSource, dir: string, ctx: SourceContext): Promise<void> {
  const refusal = refuseGitUrl(source.url) ?? refuseGitBranch(source.branch);
  if (refusal) throw new BuildError(refusal);

  const keyDir = await mkdtemp(join(ctx.privateDir ?? tmpdir(), 'git-ssh-'));
  try {
    const login = httpLogin(source.url);
    const env = { ...(await gitEnv(source, keyDir, ctx.dataDir ?? keyDir)), ...(login?.env ?? {}) };
    const args = ['clone', '--progress', '--depth', '1', `--branch=${source.branch}`];
    if (source.submodules) args.push('--recurse-submodules', '--shallow-submodules');
    // The login travels in a header (env config, never saved); the URL git keeps in .git/config,
    // which a `COPY . .` would put in the image, has none.
    args.push('--', login?.url ?? source.url, dir);

    await ctx.log(
      `Cloning ${displayUrl(source.url)} (branch ${source.branch}${source.submodules ? ', with submodules' : ''}${source.sshPrivateKey ? ', with the SSH key' : ''})`,
    );
    await runLoggedProgram({
      name: 'git clone',
      file: 'git',
      args,
      env,
      signal: ctx.signal,
      deadline: ctx.deadline,
      log: new BuildLog(ctx.log, { secrets: [...urlSecrets(source.url), source.sshPrivateKey] }),
      tailLines: 20,
      timeoutMessage: 'the git clone did not finish before the deadline',
      failure: cloneFailure,
    });

    const head = await headCommit(dir, env, ctx);
    await ctx.log(head ? `Cloned commit ${head}` : 'Cloned');
  } finally {
    await rm(keyDir, { recursive: true, force: true });
  }
}

async function gitEnv(source: GitSource, keyDir: string, dataDir: string): Promise<Record<string, string>> {
  const knownHosts = join(dataDir, 'known_hosts');
  // No ssh config files and no identity but the application's: never the host's own keys
  // (~root/.ssh) or an agent's, which would open repositories the application was not given.
  const ssh = ['ssh', '-F', '/dev/null', '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes'];
  ssh.push('-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${knownHosts}`);
  if (source.sshPrivateKey.trim() !== '') {
    const keyFile = join(keyDir, 'id');
    const key = source.sshPrivateKey.endsWith('\n') ? source.sshPrivateKey : `${source.sshPrivateKey}\n`;
    await writeFile(keyFile, key, { mode: 0o600 });
    ssh.push('-i', keyFile);
  } else {
    ssh.push('-o', 'IdentityFile=none');
  }
  for (const path of [knownHosts, keyDir]) {
    if (!SAFE_PATH.test(path)) throw new BuildError('the agent data directory has characters git cannot be given safely');
  }
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: keyDir,
    LANG: 'C.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: 'http:https:ssh:git',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_SSH_COMMAND: ssh.join(' '),
  };
}

/**
 * The most telling line of a failed clone (git's `fatal:`/`error:` lines). git's own line for
 * an SSH failure says only "Could not read from remote repository": ssh's reason (`Permission
 * denied (publickey)`, `Host key verification failed`, …) is the line before it, and is added.
 */
function cloneFailure(tail: readonly string[]): string | null {
  const lines = tail.map((l) => l.trim());
  let at = lines.length - 1;
  while (at >= 0 && !/^(fatal|error):/i.test(lines[at]!)) at--;
  if (at < 0) return lines[lines.length - 1] ?? null;
  const fatal = lines[at]!.replace(/^fatal:\s*/i, '');
  const before = lines[at - 1];
  if (/^Could not read from remote repository/i.test(fatal) && before && !/^(fatal|error|warning):/i.test(before)) {
    return `${fatal.replace(/\.$/, '')}: ${before}`;
  }
  return fatal;
}

/** `<short sha> <subject>` of the checked-out commit, or null. */
async function headCommit(dir: string, env: Record<string, string>, ctx: SourceContext): Promise<string | null> {
  const lines: string[] = [];
  const result = await runChild({
    file: 'git',
    args: ['-C', dir, 'log', '-1', '--format=%h %s'],
    env,
    signal: ctx.signal,
    deadline: Math.min(ctx.deadline, Date.now() + 10_000),
    onLine: (line) => lines.push(line),
  });
  if (result.aborted) throw new AbandonedError();
  return result.code === 0 && lines[0] ? lines[0].slice(0, 200) : null;
}
