/**
 * forgeA (GitHub, GitHub Enterprise at `https://HOST/api/v3`): a GitHub App (a JWT signed RS256
 * with the App's private key buys an installation token, minted for each use and never
 * stored) or a personal token. Listings follow the Link header (`rel="next"`), 100 per page.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { allPages, apiUrl, asArray, ForgeError, type ForgeHttpDeps, forgeJson, nextLink, seg } from './http.js';
import type { ForgeBranch, ForgeClient, ForgeRepository } from './types.js';

export interface GitHubSettings {
  apiUrl: string;
  appId: number | null;
  installationId: string | null;
  privateKey: string | null;
  /** A personal (or fine-grained) token, used when the App is not set up. */
  accessToken: string | null;
}

const LABEL = 'forgeA (GitHub)';
const b64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/** The App's JWT: issued a minute in the past (clock drift), valid 9 minutes (GitHub allows 10). */
export function appJwt(appId: number, privateKey: string, now: Date): string {
  const iat = Math.floor(now.getTime() / 1000) - 60;
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const payload = b64url(JSON.stringify({ iat, exp: iat + 600 - 60, iss: String(appId) }));
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${payload}`), createPrivateKey(privateKey));
  return `${header}.${payload}.${b64url(signature)}`;
}

export function gitHubClient(s: GitHubSettings, deps: ForgeHttpDeps & { clock: () => Date }): ForgeClient {
  const base = s.apiUrl;
  const useApp = s.appId !== null && s.installationId !== null && s.privateKey !== null;
  if (!useApp && !s.accessToken) {
    throw new ForgeError(`${LABEL}: the connection has neither an App installation (installationId and privateKey) nor a token`, 0);
  }

  const token = async (): Promise<string> => {
    if (!useApp) return s.accessToken!;
    const jwt = appJwt(s.appId!, s.privateKey!, deps.clock());
    const answer = await forgeJson(deps, LABEL, apiUrl(base, `/app/installations/${seg(s.installationId!)}/access_tokens`), {
      method: 'POST',
      headers: { authorization: `Bearer ${jwt}`, accept: 'application/vnd.github+json' },
      secrets: [jwt],
    });
    const minted = (answer.data as { token?: unknown } | null)?.token;
    if (typeof minted !== 'string' || minted === '') throw new ForgeError(`${LABEL} answered no installation token`, 0);
    return minted;
  };

  const get = async (url: string, bearer: string) =>
    forgeJson(deps, LABEL, url, { headers: { authorization: `Bearer ${bearer}`, accept: 'application/vnd.github+json' }, secrets: [bearer] });

  const repositories = async (): Promise<ForgeRepository[]> => {
    const bearer = await token();
    const first = useApp ? apiUrl(base, '/installation/repositories', { per_page: 100 }) : apiUrl(base, '/user/repos', { per_page: 100 });
    const items = await allPages(
      first,
      async (url) => {
        const answer = await get(url, bearer);
        const list = useApp ? asArray((answer.data as { repositories?: unknown } | null)?.repositories, LABEL) : asArray(answer.data, LABEL);
        return { items: list, next: nextLink(answer.headers.link) };
      },
      base,
      LABEL,
    );
    return items.map(repository);
  };

  return {
    repositories,
    async branches(owner, repo): Promise<ForgeBranch[]> {
      const bearer = await token();
      const items = await allPages(
        apiUrl(base, `/repos/${seg(owner)}/${seg(repo)}/branches`, { per_page: 100 }),
        async (url) => {
          const answer = await get(url, bearer);
          return { items: asArray(answer.data, LABEL), next: nextLink(answer.headers.link) };
        },
        base,
        LABEL,
      );
      return items.map((b) => ({ name: String(b.name), commit: str((b.commit as Record<string, unknown> | undefined)?.sha) }));
    },
    async testConnection() {
      return { repositories: (await repositories()).length };
    },
    async cloneLogin(owner, repo) {
      const bearer = await token();
      const answer = await get(apiUrl(base, `/repos/${seg(owner)}/${seg(repo)}`), bearer);
      const url = str((answer.data as Record<string, unknown> | null)?.clone_url);
      if (!url) throw new ForgeError(`${LABEL} gave no clone address for ${owner}/${repo}`, 0);
      return { url, username: 'x-access-token', password: bearer };
    },
    apiToken: token,
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function repository(r: Record<string, unknown>): ForgeRepository {
  const owner = r.owner as Record<string, unknown> | undefined;
  return {
    id: String(r.id),
    name: String(r.name),
    fullName: String(r.full_name),
    owner: String(owner?.login ?? ''),
    defaultBranch: str(r.default_branch),
    private: r.private === true,
    cloneUrl: str(r.clone_url),
  };
}
