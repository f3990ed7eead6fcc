/**
 * forgeC (Bitbucket Cloud, or an API at another base): basic auth, either `username:app
 * password` or `email:API token` (git then takes the token as user
 * `x-bitbucket-api-token-auth`). Listings follow the body's `next`, 100 per page.
 */
import { allPages, apiUrl, asArray, ForgeError, type ForgeHttpDeps, forgeJson, seg } from './http.js';
import type { ForgeBranch, ForgeClient, ForgeRepository } from './types.js';

export interface BitbucketSettings {
  apiUrl: string;
  username: string | null;
  email: string | null;
  workspace: string | null;
  appPassword: string | null;
  apiToken: string | null;
}

const LABEL = 'forgeC (Bitbucket)';

/** The connection's login: the API's basic-auth user and secret, and the user git gives with the secret. */
export function bitbucketLogin(s: Pick<BitbucketSettings, 'username' | 'email' | 'appPassword' | 'apiToken'>): { user: string; secret: string; gitUser: string } {
  if (s.apiToken) {
    if (!s.email) throw new ForgeError(`${LABEL}: an API token is used with the account's email (forgeCEmail)`, 0);
    return { user: s.email, secret: s.apiToken, gitUser: 'x-bitbucket-api-token-auth' };
  }
  if (s.appPassword) {
    if (!s.username) throw new ForgeError(`${LABEL}: an app password is used with the account's username (forgeCUsername)`, 0);
    return { user: s.username, secret: s.appPassword, gitUser: s.username };
  }
  throw new ForgeError(`${LABEL}: the connection has neither an API token nor an app password`, 0);
}

export function bitbucketClient(s: BitbucketSettings, deps: ForgeHttpDeps): ForgeClient {
  const base = s.apiUrl;
  const login = bitbucketLogin(s);
  const basic = Buffer.from(`${login.user}:${login.secret}`).toString('base64');
  const get = (url: string) => forgeJson(deps, LABEL, url, { headers: { authorization: `Basic ${basic}` }, secrets: [login.secret, basic] });

  const list = (first: string) =>
    allPages(
      first,
      async (url) => {
        const d = ((await get(url)).data ?? {}) as Record<string, unknown>;
        return { items: asArray(d.values, LABEL), next: typeof d.next === 'string' && d.next !== '' ? d.next : null };
      },
      base,
      LABEL,
    );

  const repositories = async (): Promise<ForgeRepository[]> => {
    const first = s.workspace ? apiUrl(base, `/repositories/${seg(s.workspace)}`, { pagelen: 100 }) : apiUrl(base, '/repositories', { role: 'member', pagelen: 100 });
    return (await list(first)).map(repository);
  };

  return {
    repositories,
    async branches(owner, repo): Promise<ForgeBranch[]> {
      const items = await list(apiUrl(base, `/repositories/${seg(owner)}/${seg(repo)}/refs/branches`, { pagelen: 100 }));
      return items.map((b) => ({ name: String(b.name), commit: str((b.target as Record<string, unknown> | undefined)?.hash) }));
    },
    async testConnection() {
      return { repositories: (await repositories()).length };
    },
    async cloneLogin(owner, repo) {
      const r = repository(((await get(apiUrl(base, `/repositories/${seg(owner)}/${seg(repo)}`))).data ?? {}) as Record<string, unknown>);
      if (!r.cloneUrl) throw new ForgeError(`${LABEL} gave no https clone address for ${owner}/${repo}`, 0);
      return { url: r.cloneUrl, username: login.gitUser, password: login.secret };
    },
    apiToken: async () => login.secret,
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** The https clone link, without the user name Bitbucket writes into it. */
function httpsClone(links: unknown): string | null {
  const clone = (links as { clone?: unknown } | undefined)?.clone;
  if (!Array.isArray(clone)) return null;
  const href = str((clone as Record<string, unknown>[]).find((c) => c.name === 'https')?.href);
  const url = href ? URL.parse(href) : null;
  if (!url) return null;
  url.username = '';
  url.password = '';
  return url.href;
}

function repository(r: Record<string, unknown>): ForgeRepository {
  const workspace = r.workspace as Record<string, unknown> | undefined;
  const full = String(r.full_name ?? '');
  return {
    id: String(r.uuid ?? full),
    name: String(r.slug ?? r.name),
    fullName: full,
    owner: String(workspace?.slug ?? full.split('/')[0] ?? ''),
    defaultBranch: str((r.mainbranch as Record<string, unknown> | undefined)?.name),
    private: r.is_private === true,
    cloneUrl: httpsClone(r.links),
  };
}
