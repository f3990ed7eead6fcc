/**
 * The four forges' REST APIs as tests need them, on one loopback HTTP server, speaking each
 * one's documented JSON shapes, auth headers and pagination (a hosted forge cannot run here):
 *
 * - `/gh` GitHub: `POST /app/installations/{id}/access_tokens` verifies the App's RS256 JWT
 *   with its public key and mints a token; listings page with `Link: <…>; rel="next"`.
 * - `/gl` GitLab (`/api/v4`): `Authorization: Bearer`; listings page with `X-Next-Page`;
 *   `POST /oauth/token` answers the `refresh_token` grant.
 * - `/bb` Bitbucket (`/2.0`): basic auth (username and app password, or email and API token);
 *   listings carry `next` in the body.
 * - `/gt` Gitea (`/api/v1`): `Authorization: token …`; listings by `page` and `limit`, no Link.
 *
 * Each forge has `repoCount` repositories in owner `acme` (three pages at the page sizes
 * used), branches `main`, `release` and `v1.0` over two pages, and repository `acme/shop`
 * whose clone address is the one the test gives. GitHub, GitLab and Bitbucket also take pull request
 * comments (posted and edited), commit statuses and permission checks on `acme/shop`
 * (GitLab project 2010), recorded in `calls`; `collaborators` may write.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeForgeOptions {
  github: { appId: number; installationId: string; publicKey: KeyObject | string; token?: string; personalToken?: string };
  gitlab: { accessToken: string; refreshToken: string; clientId: string; clientSecret: string };
  /** Basic auth with `username:appPassword`, or `email:apiToken` when given. */
  bitbucket: { username: string; appPassword: string; email?: string; apiToken?: string };
  gitea: { token: string };
  /** The clone address of `acme/shop` on each forge. */
  cloneUrls: { github: string; gitlab: string; bitbucket: string; gitea: string };
}

export interface FakeForges {
  baseUrl: string;
  /** The installation tokens minted (GitHub); one per use. */
  minted: string[];
  /** GitLab's current tokens (after refreshes). */
  gitlab: { accessToken: string; refreshToken: string; refreshes: number };
  /** The clone address of `acme/shop` on each forge (a test may change it). */
  cloneUrls: FakeForgeOptions['cloneUrls'];
  /** Authorization headers seen, per forge. */
  seen: Record<'gh' | 'gl' | 'bb' | 'gt', string[]>;
  /** Comments, statuses and permission checks received (GitHub, GitLab and Bitbucket). */
  calls: Array<{ forge: 'gh' | 'gl' | 'bb'; method: string; path: string; authorization: string; body: any }>;
  /** Who may write to `acme/shop` (GitHub logins, GitLab user ids, Bitbucket account uuids). */
  collaborators: string[];
  stop(): Promise<void>;
}

const BRANCHES = ['main', 'release', 'v1.0'];

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An RS256 JWT issued by the App, checked as GitHub checks it: signature, issuer, lifetime ≤ 10 min. */
function validAppJwt(header: string | undefined, appId: number, key: KeyObject): boolean {
  const jwt = /^Bearer (.+)$/.exec(header ?? '')?.[1];
  const [h, p, s] = jwt?.split('.') ?? [];
  if (!h || !p || !s) return false;
  const head = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss?: string; iat?: number; exp?: number };
  const now = Date.now() / 1000;
  const ok = verify('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
  return ok && head.alg === 'RS256' && claims.iss === String(appId) && (claims.exp ?? 0) > now && (claims.exp ?? 0) - (claims.iat ?? 0) <= 600;
}

/** `count` items split into pages of `size`; page numbers from 1. */
const pageOf = <T>(all: T[], page: number, size: number) => all.slice((page - 1) * size, page * size);

export async function startFakeForges(o: FakeForgeOptions, repoCount = 5): Promise<FakeForges> {
  const publicKey = typeof o.github.publicKey === 'string' ? createPublicKey(o.github.publicKey) : o.github.publicKey;
  const names = Array.from({ length: repoCount }, (_, i) => (i === 0 ? 'shop' : `repo-${i}`));
  const state: FakeForges = {
    baseUrl: '',
    minted: [],
    gitlab: { accessToken: o.gitlab.accessToken, refreshToken: o.gitlab.refreshToken, refreshes: 0 },
    cloneUrls: { ...o.cloneUrls },
    seen: { gh: [], gl: [], bb: [], gt: [] },
    calls: [],
    collaborators: [],
    stop: async () => undefined,
  };
  const base = () => state.baseUrl;
  /** Records a call whose path matches `pattern` (its JSON body read); null when it does not match. */
  const recordCall = async (forge: 'gh' | 'gl' | 'bb', req: IncomingMessage, path: string, pattern: RegExp) => {
    if (!pattern.test(path)) return null;
    const text = await bodyOf(req);
    const call = { forge, method: req.method ?? '', path, authorization: req.headers.authorization ?? '', body: text ? JSON.parse(text) : null };
    state.calls.push(call);
    return call;
  };

  const github = async (req: IncomingMessage, res: ServerResponse, url: URL, path: string) => {
    const auth = req.headers.authorization;
    if (req.method === 'POST' && path === `/app/installations/${o.github.installationId}/access_tokens`) {
      if (!validAppJwt(auth, o.github.appId, publicKey)) return send(res, 401, { message: 'A JSON web token could not be decoded' });
      const token = o.github.token ?? `ghs_${randomBytes(12).toString('hex')}`;
      state.minted.push(token);
      return send(res, 201, { token, expires_at: new Date(Date.now() + 3600_000).toISOString() });
    }
    state.seen.gh.push(auth ?? '');
    const personal = o.github.personalToken !== undefined && auth === `Bearer ${o.github.personalToken}`;
    if (!personal && !state.minted.some((t) => auth === `Bearer ${t}`)) return send(res, 401, { message: 'Bad credentials' });
    const page = Number(url.searchParams.get('page') ?? '1');
    const link = (last: number, p: string): Record<string, string> =>
      page < last ? { link: `<${base()}/gh${p}?per_page=2&page=${page + 1}>; rel="next", <${base()}/gh${p}?per_page=2&page=${last}>; rel="last"` } : {};
    if (path === '/installation/repositories' || (personal && path === '/user/repos')) {
      const repos = pageOf(names, page, 2).map((name, i) => ({
        id: 1000 + page * 10 + i, name, full_name: `acme/${name}`, owner: { login: 'acme' }, private: true, default_branch: 'main',
        clone_url: `https://github.example/acme/${name}.git`,
      }));
      // The installation listing wraps the page in an object; the user's is the list itself.
      const body = path === '/user/repos' ? repos : { total_count: names.length, repositories: repos };
      return send(res, 200, body, link(Math.ceil(names.length / 2), path));
    }
    if (path === '/repos/acme/shop/branches') {
      return send(res, 200, pageOf(BRANCHES, page, 2).map((name) => ({ name, commit: { sha: `sha-${name}` }, protected: false })), link(2, path));
    }
    if (path === '/repos/acme/shop') return send(res, 200, { id: 1, name: 'shop', full_name: 'acme/shop', owner: { login: 'acme' }, clone_url: state.cloneUrls.github });
    const pullRequestCall = await recordCall('gh', req, path, /^\/repos\/acme\/shop\/(issues\/\d+\/comments|issues\/comments\/\d+|statuses\/\w+|collaborators\/[^/]+\/permission)$/);
    if (pullRequestCall) {
      const user = /collaborators\/([^/]+)\/permission$/.exec(path)?.[1];
      if (user) return send(res, 200, { permission: state.collaborators.includes(user) ? 'write' : 'read', user: { login: user } });
      return send(res, req.method === 'POST' ? 201 : 200, { id: state.calls.length, ...pullRequestCall.body });
    }
    return send(res, 404, { message: 'Not Found' });
  };

  const gitlab = async (req: IncomingMessage, res: ServerResponse, url: URL, path: string) => {
    if (req.method === 'POST' && path === '/oauth/token') {
      const form = new URLSearchParams(await bodyOf(req));
      if (
        form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== state.gitlab.refreshToken ||
        form.get('client_id') !== o.gitlab.clientId || form.get('client_secret') !== o.gitlab.clientSecret
      ) {
        return send(res, 400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid' });
      }
      state.gitlab.refreshes++;
      state.gitlab.accessToken = `glat-${randomBytes(8).toString('hex')}`;
      state.gitlab.refreshToken = `glrt-${randomBytes(8).toString('hex')}`;
      return send(res, 200, { access_token: state.gitlab.accessToken, token_type: 'Bearer', expires_in: 7200, refresh_token: state.gitlab.refreshToken, created_at: Math.floor(Date.now() / 1000) });
    }
    const auth = req.headers.authorization ?? '';
    state.seen.gl.push(auth);
    if (auth !== `Bearer ${state.gitlab.accessToken}`) return send(res, 401, { message: '401 Unauthorized' });
    const page = Number(url.searchParams.get('page') ?? '1');
    const next = (last: number) => (page < last ? { 'x-next-page': String(page + 1), 'x-page': String(page) } : { 'x-next-page': '', 'x-page': String(page) });
    if (path === '/api/v4/groups/acme/projects' || path === '/api/v4/projects') {
      const repos = pageOf(names, page, 2).map((name, i) => ({
        id: 2000 + page * 10 + i, name, path: name, path_with_namespace: `acme/${name}`, namespace: { full_path: 'acme' }, default_branch: 'main',
        visibility: 'private', http_url_to_repo: `https://gitlab.example/acme/${name}.git`,
      }));
      return send(res, 200, repos, next(Math.ceil(names.length / 2)));
    }
    if (path === '/api/v4/projects/acme%2Fshop/repository/branches' || path === '/api/v4/projects/2010/repository/branches') {
      return send(res, 200, pageOf(BRANCHES, page, 2).map((name) => ({ name, commit: { id: `sha-${name}` } })), next(2));
    }
    if (path === '/api/v4/projects/acme%2Fshop') return send(res, 200, { id: 2010, path_with_namespace: 'acme/shop', http_url_to_repo: state.cloneUrls.gitlab });
    const mergeRequestCall = await recordCall('gl', req, path, /^\/api\/v4\/projects\/2010\/(merge_requests\/\d+\/notes(\/\d+)?|statuses\/\w+|members\/all\/\d+)$/);
    if (mergeRequestCall) {
      const member = /members\/all\/(\d+)$/.exec(path)?.[1];
      if (member) return state.collaborators.includes(member) ? send(res, 200, { id: Number(member), access_level: 30 }) : send(res, 404, { message: '404 Not found' });
      return send(res, req.method === 'POST' ? 201 : 200, { id: state.calls.length, ...mergeRequestCall.body });
    }
    return send(res, 404, { message: '404 Project Not Found' });
  };

  const bitbucket = async (req: IncomingMessage, res: ServerResponse, url: URL, path: string) => {
    const auth = req.headers.authorization ?? '';
    state.seen.bb.push(auth);
    const basic = (user: string, secret: string) => `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;
    const logins = [basic(o.bitbucket.username, o.bitbucket.appPassword), ...(o.bitbucket.email && o.bitbucket.apiToken ? [basic(o.bitbucket.email, o.bitbucket.apiToken)] : [])];
    if (!logins.includes(auth)) {
      return send(res, 401, { type: 'error', error: { message: 'Invalid credentials' } });
    }
    const prCall = await recordCall('bb', req, path, /^\/2\.0\/repositories\/acme\/shop\/(pullrequests\/\d+\/comments(\/\d+)?|commit\/\w+\/statuses\/build|permissions-config\/users\/.+)$/);
    if (prCall) {
      const user = /permissions-config\/users\/(.+)$/.exec(path)?.[1];
      if (user) return state.collaborators.includes(decodeURIComponent(user)) ? send(res, 200, { permission: 'write', user: { uuid: user } }) : send(res, 404, { type: 'error', error: { message: 'not found' } });
      return send(res, req.method === 'POST' ? 201 : 200, { id: state.calls.length, ...prCall.body });
    }
    const page = Number(url.searchParams.get('page') ?? '1');
    const paged = <T>(all: T[], size: number, p: string) => ({
      pagelen: size, page, size: all.length, values: pageOf(all, page, size),
      ...(page * size < all.length ? { next: `${base()}/bb${p}?pagelen=${size}&page=${page + 1}` } : {}),
    });
    if (path === '/2.0/repositories/acme') {
      const repos = names.map((name) => ({
        uuid: `{${name}}`, name, slug: name, full_name: `acme/${name}`, is_private: true, workspace: { slug: 'acme' }, mainbranch: { name: 'main' },
        links: { clone: [{ name: 'https', href: `https://${o.bitbucket.username}@bitbucket.example/acme/${name}.git` }, { name: 'ssh', href: `git@bitbucket.example:acme/${name}.git` }] },
      }));
      return send(res, 200, paged(repos, 2, path));
    }
    if (path === '/2.0/repositories/acme/shop/refs/branches') return send(res, 200, paged(BRANCHES.map((name) => ({ name, target: { hash: `sha-${name}` } })), 2, path));
    if (path === '/2.0/repositories/acme/shop') {
      const clone = new URL(state.cloneUrls.bitbucket);
      clone.username = o.bitbucket.username;
      return send(res, 200, { full_name: 'acme/shop', slug: 'shop', workspace: { slug: 'acme' }, links: { clone: [{ name: 'https', href: clone.href }] } });
    }
    return send(res, 404, { type: 'error', error: { message: 'Repository not found' } });
  };

  const gitea = async (req: IncomingMessage, res: ServerResponse, url: URL, path: string) => {
    const auth = req.headers.authorization ?? '';
    state.seen.gt.push(auth);
    if (auth !== `token ${o.gitea.token}`) return send(res, 401, { message: 'user does not exist', url: 'https://gitea.example/api/swagger' });
    const page = Number(url.searchParams.get('page') ?? '1');
    const limit = Number(url.searchParams.get('limit') ?? '30');
    if (path === '/api/v1/orgs/acme/repos' || path === '/api/v1/user/repos') {
      const many = Array.from({ length: 2 * limit + 3 }, (_, i) => (i === 0 ? 'shop' : `repo-${i}`));
      const repos = pageOf(many, page, limit).map((name, i) => ({
        id: 4000 + (page - 1) * limit + i, name, full_name: `acme/${name}`, owner: { login: 'acme' }, private: false, default_branch: 'main',
        clone_url: `https://gitea.example/acme/${name}.git`,
      }));
      return send(res, 200, repos, { 'x-total-count': String(many.length) });
    }
    if (path === '/api/v1/repos/acme/shop/branches') return send(res, 200, pageOf(BRANCHES, page, limit).map((name) => ({ name, commit: { id: `sha-${name}` } })));
    if (path === '/api/v1/repos/acme/shop') return send(res, 200, { id: 4000, name: 'shop', full_name: 'acme/shop', owner: { login: 'acme' }, clone_url: state.cloneUrls.gitea });
    return send(res, 404, { message: 'The target couldn\'t be found.' });
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const [, forge, ...rest] = url.pathname.split('/');
    const path = `/${rest.join('/')}`;
    const handler = { gh: github, gl: gitlab, bb: bitbucket, gt: gitea }[forge ?? ''];
    if (!handler) return send(res, 404, { message: 'no such forge' });
    handler(req, res, url, path).catch((err: unknown) => send(res, 500, { message: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.stop = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return state;
}
