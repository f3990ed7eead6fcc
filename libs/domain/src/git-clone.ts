/**
 * How the platform runs git against a user's repository, wherever it runs it (the agent clones
 * sources to build or deploy them; the control plane fetches a compose file): the environment
 * that keeps git away from the host's configuration, credentials and SSH identities, and the
 * reading of a failed clone's output. Pure: callers write the key file and run git themselves,
 * with argument arrays, after checking the URL and branch (git-remote.ts).
 */

/** Characters allowed in the paths placed in GIT_SSH_COMMAND (our own paths, never user text): ssh parses it with a shell's word rules. */
const SAFE_PATH = /^[A-Za-z0-9._/-]+$/;

export class GitSetupError extends Error {
  override name = 'GitSetupError';
}

export interface GitEnvInput {
  /** git's HOME: a private, temporary directory (nothing of the user's home is read). */
  home: string;
  /** The file holding the private SSH key (mode 0600), or null to offer no identity at all. */
  sshKeyFile: string | null;
  /** Where SSH host keys are pinned: accepted the first time, then required to match. */
  knownHostsFile: string;
  /** The PATH git and ssh are looked up on. */
  path?: string;
  /** An ssh_config file of our own (the outbound pin of the repository's host); default none. */
  sshConfigFile?: string | null;
}

/**
 * The whole environment of a git run: no system or global configuration, never a prompt,
 * only the http(s), ssh and git transports (submodules included: no `file://`, no `ext::`),
 * and ssh without the host's or user's config files, agent or host identities: only the given
 * key (or none).
 */
export function gitEnv(input: GitEnvInput): Record<string, string> {
  for (const path of [input.knownHostsFile, ...(input.sshKeyFile ? [input.sshKeyFile] : []), ...(input.sshConfigFile ? [input.sshConfigFile] : [])]) {
    if (!SAFE_PATH.test(path)) throw new GitSetupError(`the path ${JSON.stringify(path)} has characters git cannot be given safely`);
  }
  const ssh = ['ssh', '-F', input.sshConfigFile ?? '/dev/null', '-o', 'BatchMode=yes', '-o', 'IdentitiesOnly=yes'];
  ssh.push('-o', 'StrictHostKeyChecking=accept-new', '-o', `UserKnownHostsFile=${input.knownHostsFile}`);
  if (input.sshKeyFile) ssh.push('-i', input.sshKeyFile);
  else ssh.push('-o', 'IdentityFile=none');
  return {
    PATH: input.path ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: input.home,
    LANG: 'C.UTF-8',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: 'http:https:ssh:git',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_SSH_COMMAND: ssh.join(' '),
  };
}

/** A private key as ssh reads it from a file: ending in a line break. */
export const sshKeyFileContent = (key: string) => (key.endsWith('\n') ? key : `${key}\n`);

/**
 * An http(s) URL's login as git configuration given through the environment (an
 * `Authorization: Basic` header for that origin only, so submodules elsewhere never get it),
 * and the URL without it; null when the URL carries none. The login then appears neither in
 * git's arguments (visible to every local user) nor in the clone's `.git/config`.
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

/**
 * A login given apart from the URL (a forge's token) as the same environment-only header as
 * `httpLogin`, for the URL's origin; null for a URL that is not http(s).
 */
export function httpBasicEnv(raw: string, username: string, password: string): Record<string, string> | null {
  const url = URL.parse(raw);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
  const basic = Buffer.from(`${username}:${password}`).toString('base64');
  return { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: `http.${url.origin}/.extraHeader`, GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` };
}

/** The login an http(s) URL carries, in the forms git may print it, to hide from logs and errors. */
export function gitUrlSecrets(url: string): string[] {
  try {
    const { username, password, protocol } = new URL(url);
    if (protocol !== 'http:' && protocol !== 'https:') return [];
    return [username, password, decodeURIComponent(username), decodeURIComponent(password)].filter((s) => s.length >= 3);
  } catch {
    return [];
  }
}

/**
 * The most telling line of a failed git run (its `fatal:`/`error:` lines). git's own line for
 * an SSH failure says only "Could not read from remote repository": ssh's reason (`Permission
 * denied (publickey)`, `Host key verification failed`, …) is the line before it, and is added.
 */
export function gitFailure(tail: readonly string[]): string | null {
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
