/**
 * A shallow clone of one branch of a generic git repository (and, when asked, its
 * submodules), with the git program:
 *
 *   git clone --progress --depth 1 --branch=<branch> [--recurse-submodules --shallow-submodules] -- <url> <dir>
 *
 * then, when the source names a commit, that commit (checkOutCommit).
 *
 * - Argument arrays only; the URL and the branch are checked first, as the control plane
 *   checked them when they were saved (@skiff/domain refuseGitUrl / refuseGitBranch: no
 *   leading `-`, no `<transport>::` remote helpers such as `ext::`, only http(s), ssh, git
 *   and scp-like `user@host:path` URLs, no link-local or cloud-metadata host), and
 *   GIT_ALLOW_PROTOCOL=http:https:ssh:git holds for submodules too (no `file://`, no `ext::`).
 * - Before git runs, the repository's host is resolved and every address checked under the
 *   command's outbound policy (@skiff/outbound: link-local and metadata always refused,
 *   loopback and private unless the operator allows them), and git is pinned to those
 *   addresses (curl's resolve list, the address in a git:// URL, an ssh_config HostName) and
 *   follows no http redirect.
 * - git runs without the system's or the user's configuration, never prompts
 *   (GIT_TERMINAL_PROMPT=0, ssh BatchMode), and new SSH hosts are accepted once and then
 *   pinned in `<agent data>/known_hosts`.
 * - An SSH private key is written to a 0600 file in the build's private directory and
 *   removed after the clone, whatever happens.
 * - A forge's token (`httpUsername`/`httpPassword`) is given to git the same way: an
 *   `Authorization` header for the URL's origin, through the environment only.
 * - Credentials in an http URL never reach the log: URLs are shown as `https://***@host/…`
 *   and any line carrying the user name or password is hidden.
 * - The deadline and the signal kill git and its children (ssh, remote helpers).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitSetupError, gitEnv as safeGitEnv, gitFailure, gitUrlSecrets, httpBasicEnv, httpLogin, refuseGitBranch, refuseGitUrl, sshKeyFileContent } from '@skiff/domain';
import { type GitPin, OutboundRefused, pinGitRemote } from '@skiff/outbound';
import type { GitSource } from '@skiff/proto';
import { AbandonedError } from '../abort/abandoned.js';
import { BuildLog, redactUrlCredentials } from './build-log.js';
import { runChild } from './child-process.js';
import { BuildError } from './errors.js';
import type { SourceContext } from './source.js';
import { runLoggedProgram } from './logged-program.js';

/** The URL as it may be shown. */
export const displayUrl = (url: string) => redactUrlCredentials(url);

export async function fetchGitSource(source: GitSource, dir: string, ctx: SourceContext): Promise<void> {
  const refusal = refuseGitUrl(source.url) ?? refuseGitBranch(source.branch) ?? (source.commit && !FULL_SHA.test(source.commit) ? 'the commit to build is not a full hex object name' : null);
  if (refusal) throw new BuildError(refusal);

  const keyDir = await mkdtemp(join(ctx.privateDir ?? tmpdir(), 'git-ssh-'));
  try {
    const login = httpLogin(source.url);
    // The login travels in a header (env config, never saved); the URL git keeps in .git/config,
    // which a `COPY . .` would put in the image, has none.
    const pin = await pinned(login?.url ?? source.url, source, ctx);
    const env = { ...(await gitEnv(source, keyDir, ctx.dataDir ?? keyDir, pin)), ...(login?.env ?? {}), ...givenLogin(source, login?.url ?? source.url) };
    const args = [...pin.configArgs, 'clone', '--progress', '--depth', '1', `--branch=${source.branch}`];
    if (source.submodules) args.push('--recurse-submodules', '--shallow-submodules');
    args.push('--', pin.url, dir);

    await ctx.log(
      `Cloning ${displayUrl(source.url)} (branch ${source.branch}${source.submodules ? ', with submodules' : ''}${source.sshPrivateKey ? ', with the SSH key' : ''}${source.httpPassword ? ", with the forge's token" : ''})`,
    );
    await runLoggedProgram({
      name: 'git clone',
      file: 'git',
      args,
      env,
      signal: ctx.signal,
      deadline: ctx.deadline,
      log: new BuildLog(ctx.log, { secrets: [...gitUrlSecrets(source.url), source.sshPrivateKey, ...loginSecrets(source)] }),
      tailLines: 20,
      timeoutMessage: 'the git clone did not finish before the deadline',
      failure: gitFailure,
    });

    const secrets = [...gitUrlSecrets(source.url), source.sshPrivateKey, ...loginSecrets(source)];
    if (source.commit) await checkOutCommit(source, dir, { env, configArgs: pin.configArgs, secrets }, ctx);

    const head = await headCommit(dir, env, ctx);
    await ctx.log(head ? `Cloned commit ${head}` : 'Cloned');
  } finally {
    await rm(keyDir, { recursive: true, force: true });
  }
}

/** A full SHA-1 or SHA-256 object name: nothing git could read as an option or a revision expression. */
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

interface GitRun {
  env: Record<string, string>;
  /** The pin's `-c` options (addresses, no redirects), for every command that reaches the server. */
  configArgs: string[];
  secrets: string[];
}

/**
 * Checks out `source.commit` in the fresh clone. A shallow clone holds only the branch's head:
 * another commit is fetched by name (`git fetch --depth 1 origin <sha>`, which GitHub, GitLab,
 * Gitea and git's own http backend allow); when the server refuses, the branch's head is built
 * and the log says so.
 */
async function checkOutCommit(source: GitSource, dir: string, git: GitRun, ctx: SourceContext): Promise<void> {
  const run = (name: string, args: string[], timeoutMessage: string) =>
    runLoggedProgram({ name, file: 'git', args, env: git.env, signal: ctx.signal, deadline: ctx.deadline, log: new BuildLog(ctx.log, { secrets: git.secrets }), tailLines: 20, timeoutMessage, failure: gitFailure });
  if ((await revParseHead(dir, git.env, ctx)) === source.commit) return;
  try {
    await run('git fetch', [...git.configArgs, '-C', dir, 'fetch', '--no-tags', '--depth', '1', 'origin', source.commit], 'fetching the commit did not finish before the deadline');
  } catch (err) {
    if (!(err instanceof BuildError)) throw err;
    await ctx.log(`The commit ${source.commit} could not be fetched (${err.message}): building the head of branch ${source.branch} instead`);
    return;
  }
  await ctx.log(`Checking out commit ${source.commit}`);
  await run('git checkout', ['-C', dir, 'checkout', '--quiet', '--detach', source.commit], 'the checkout did not finish before the deadline');
  if (source.submodules) {
    await run('git submodule update', [...git.configArgs, '-C', dir, 'submodule', 'update', '--init', '--recursive', '--depth', '1'], 'the submodules did not finish before the deadline');
  }
}

/** The full name of the checked-out commit, or null. */
async function revParseHead(dir: string, env: Record<string, string>, ctx: SourceContext): Promise<string | null> {
  const lines: string[] = [];
  const result = await runChild({ file: 'git', args: ['-C', dir, 'rev-parse', 'HEAD'], env, signal: ctx.signal, deadline: Math.min(ctx.deadline, Date.now() + 10_000), onLine: (line) => lines.push(line) });
  if (result.aborted) throw new AbandonedError();
  return result.code === 0 && lines[0] ? lines[0].trim() : null;
}

/** The source's own http login (a forge token) as git's environment-only header; it replaces a login in the URL. */
function givenLogin(source: GitSource, url: string): Record<string, string> {
  if (!source.httpPassword) return {};
  const env = httpBasicEnv(url, source.httpUsername, source.httpPassword);
  if (!env) throw new BuildError('a login for the clone needs an http(s) URL');
  return env;
}

/** The forms of the source's http login git could print. */
function loginSecrets(source: GitSource): string[] {
  if (!source.httpPassword) return [];
  return [source.httpPassword, Buffer.from(`${source.httpUsername}:${source.httpPassword}`).toString('base64')];
}

/** The repository's host checked under the command's outbound policy, and git's pin to it. */
async function pinned(url: string, source: GitSource, ctx: SourceContext): Promise<GitPin> {
  try {
    return await pinGitRemote(url, { allowPrivate: source.outbound?.allowPrivate ?? false }, ctx.resolver);
  } catch (err) {
    if (err instanceof OutboundRefused) throw new BuildError(`the git URL's host is refused: ${err.message}`);
    throw err;
  }
}

/** git's environment (@skiff/domain gitEnv), with the source's private key and the ssh pin written to 0600 files in `keyDir`. */
async function gitEnv(source: GitSource, keyDir: string, dataDir: string, pin: GitPin): Promise<Record<string, string>> {
  let sshKeyFile: string | null = null;
  if (source.sshPrivateKey.trim() !== '') {
    sshKeyFile = join(keyDir, 'id');
    await writeFile(sshKeyFile, sshKeyFileContent(source.sshPrivateKey), { mode: 0o600 });
  }
  let sshConfigFile: string | null = null;
  if (pin.sshConfig) {
    sshConfigFile = join(keyDir, 'ssh_config');
    await writeFile(sshConfigFile, pin.sshConfig, { mode: 0o600 });
  }
  try {
    // No ssh config files and no identity but the application's: never the host's own keys
    // (~root/.ssh) or an agent's, which would open repositories the application was not given.
    return safeGitEnv({ home: keyDir, sshKeyFile, sshConfigFile, knownHostsFile: join(dataDir, 'known_hosts'), path: process.env.PATH });
  } catch (err) {
    if (err instanceof GitSetupError) throw new BuildError('the agent data directory has characters git cannot be given safely');
    throw err;
  }
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
