/**
 * Git over HTTP for tests: `git http-backend` (CGI) behind a small Node `http` server on a
 * free loopback port, serving the bare repositories of one temporary directory
 * (TEST-SERVICES.md "Git over HTTP"). Optional basic auth in front, so tests can check that
 * credentials in a clone URL never reach a log.
 *
 * Repositories are written through a working copy of each: `commit()` writes files, commits
 * and pushes to the bare repository the server serves. Every git call takes an argument
 * array (no shell) and runs without the user's git configuration.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitServerOptions {
  /** Require this login (basic auth) for every request. */
  auth?: { username: string; password: string };
}

export type RepoFiles = Record<string, string | { link: string } | null>;

export interface TestGitRepo {
  name: string;
  /** `http://127.0.0.1:<port>/<name>.git` (without credentials); for SSH, the ssh:// URL. */
  url: string;
  /** The URL with the server's login in it (the plain URL when the server has none, and for SSH). */
  authUrl: string;
  /**
   * Writes `files` (path → content; `{ link }` a symbolic link to `link`; null removes the
   * file) on `branch` (default `main`, created from the current one when new), commits and
   * pushes. Answers the commit id.
   */
  commit(files: RepoFiles, options?: { branch?: string; message?: string }): Promise<string>;
  /**
   * Adds another repository of this server as a submodule at `path` (by a relative URL,
   * `../<name>.git`, so a clone through `authUrl` fetches it with the same login) and pushes.
   */
  addSubmodule(path: string, repo: TestGitRepo, options?: { branch?: string }): Promise<string>;
}

export interface TestGitServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  /** A new repository (bare, default branch `main`) with its first commit of `files`. */
  createRepo(name: string, files: RepoFiles): Promise<TestGitRepo>;
  stop(): Promise<void>;
}

const GIT_TIMEOUT_MS = 30_000;
const IDENTITY = ['-c', 'user.name=Skiff Test', '-c', 'user.email=test@skiff.local', '-c', 'protocol.allow=always'];

/** git without the user's or the system's configuration. */
const gitEnv = (): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
});

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', [...IDENTITY, ...args], { cwd, env: gitEnv(), timeout: GIT_TIMEOUT_MS }, (err, stdout, stderr) => {
      if (err) reject(new Error(`git ${args[0]} failed: ${String(stderr).trim() || err.message}`));
      else resolve(String(stdout).trim());
    });
  });
}

export interface TestRepoStore {
  /** A new repository (bare, default branch `main`) with its first commit of `files`. */
  createRepo(name: string, files: RepoFiles): Promise<TestGitRepo>;
}

/**
 * Bare repositories under `root`, each written through a working copy under `work` (pushes go
 * to the bare path directly). `urls` names how clients reach a repository: `url` and
 * `authUrl` (with the login, if any; also the working copy's `origin`, which relative
 * submodule URLs resolve against). Shared by the HTTP and the SSH test servers.
 */
export function createRepoStore(r: {
  dir: string;
  root: string;
  work: string;
  urls: (name: string) => { url: string; authUrl: string };
}): TestRepoStore {
  const repoHandle = (name: string, bare: string, checkout: string): TestGitRepo => {
    const { url, authUrl } = r.urls(name);
    const switchTo = async (branch: string) => {
      const current = await git(checkout, ['symbolic-ref', '--short', 'HEAD']);
      if (current === branch) return;
      const exists = await git(checkout, ['branch', '--list', branch]);
      await git(checkout, exists ? ['checkout', '-q', branch] : ['checkout', '-q', '-b', branch]);
    };
    const push = async (branch: string) => {
      await git(checkout, ['push', '-q', bare, `HEAD:refs/heads/${branch}`]);
      return git(checkout, ['rev-parse', 'HEAD']);
    };
    return {
      name,
      url,
      authUrl,
      async commit(files, { branch = 'main', message = 'change' } = {}) {
        await switchTo(branch);
        for (const [path, content] of Object.entries(files)) {
          const file = join(checkout, path);
          if (content === null) {
            await rm(file, { force: true });
          } else if (typeof content === 'object') {
            await mkdir(dirname(file), { recursive: true });
            await rm(file, { force: true });
            await symlink(content.link, file);
          } else {
            await mkdir(dirname(file), { recursive: true });
            await writeFile(file, content);
          }
        }
        await git(checkout, ['add', '-A']);
        await git(checkout, ['commit', '-q', '--allow-empty', '-m', message]);
        return push(branch);
      },
      async addSubmodule(path, repo, { branch = 'main' } = {}) {
        await switchTo(branch);
        await git(checkout, ['submodule', '--quiet', 'add', `../${repo.name}.git`, path]);
        await git(checkout, ['commit', '-q', '-m', `submodule ${path}`]);
        return push(branch);
      },
    };
  };

  return {
    async createRepo(name, files) {
      if (!/^[A-Za-z0-9._-]+$/.test(name) || name.startsWith('.')) throw new Error(`bad repository name ${name}`);
      const bare = join(r.root, `${name}.git`);
      const checkout = join(r.work, name);
      await git(r.dir, ['init', '-q', '--bare', '-b', 'main', bare]);
      await git(r.dir, ['init', '-q', '-b', 'main', checkout]);
      await git(checkout, ['remote', 'add', 'origin', r.urls(name).authUrl]);
      const repo = repoHandle(name, bare, checkout);
      await repo.commit(files, { message: 'first' });
      return repo;
    },
  };
}

export async function startGitServer(options: GitServerOptions = {}): Promise<TestGitServer> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-git-'));
  const root = join(dir, 'repos');
  const work = join(dir, 'work');
  await mkdir(root);
  await mkdir(work);

  const server = createServer((req, res) => serveGit(req, res, root, options.auth));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const login = options.auth
    ? `${encodeURIComponent(options.auth.username)}:${encodeURIComponent(options.auth.password)}@`
    : '';
  const store = createRepoStore({
    dir,
    root,
    work,
    urls: (name) => ({ url: `${baseUrl}/${name}.git`, authUrl: `http://${login}127.0.0.1:${port}/${name}.git` }),
  });

  return {
    baseUrl,
    createRepo: (name, files) => store.createRepo(name, files),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function authorized(req: IncomingMessage, auth: GitServerOptions['auth']): string | null {
  if (!auth) return '';
  const header = req.headers.authorization ?? '';
  if (!header.startsWith('Basic ')) return null;
  const [user, ...rest] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':');
  return user === auth.username && rest.join(':') === auth.password ? user : null;
}

/** One request through `git http-backend`: CGI variables in, `Status`/headers/body out. */
function serveGit(req: IncomingMessage, res: ServerResponse, root: string, auth: GitServerOptions['auth']): void {
  const user = authorized(req, auth);
  if (user === null) {
    res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="skiff-test-git"' }).end();
    return;
  }
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const child = spawn('git', ['http-backend'], {
    env: {
      ...gitEnv(),
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ''),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: user,
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) } : {}),
      ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined);

  let head = Buffer.alloc(0);
  let headersSent = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    const endLf = head.indexOf('\n\n');
    const cut = end >= 0 ? { at: end, len: 4 } : endLf >= 0 ? { at: endLf, len: 2 } : null;
    if (!cut) return;
    let status = 200;
    const headers: Record<string, string> = {};
    for (const line of head.subarray(0, cut.at).toString('latin1').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
      else headers[name] = value;
    }
    res.writeHead(status, headers);
    headersSent = true;
    res.write(head.subarray(cut.at + cut.len));
  });
  child.once('close', (code) => {
    if (!headersSent) res.writeHead(code === 0 ? 200 : 500);
    res.end();
  });
  child.once('error', () => {
    if (!headersSent) res.writeHead(500);
    res.end();
  });
}
