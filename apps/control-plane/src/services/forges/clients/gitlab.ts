/**
 * forgeB (GitLab, gitlab.com or self-hosted; the API is `{instance}/api/v4`): an OAuth access
 * token (refreshed with the `refresh_token` grant when it has expired or is refused; the new
 * tokens are handed to `saveTokens`, which seals and stores them) or a personal/group token.
 * Listings follow `X-Next-Page`, 100 per page.
 */
import { allPages, apiUrl, asArray, ForgeError, type ForgeHttpDeps, forgeJson, seg } from './http.js';
import type { ForgeBranch, ForgeClient, ForgeRepository } from './types.js';

export interface GitLabTokens {
  accessToken: string;
  refreshToken: string | null;
  /** ISO time the access token stops working; null: unknown (a personal token). */
  expiresAt: string | null;
}

export interface GitLabSettings {
  /** The address the platform reaches the instance at (forgeBInternalUrl, else forgeBUrl). */
  instanceUrl: string;
  /** The instance's public address (forgeBUrl): clone addresses the forge gives start with it. */
  publicUrl: string;
  groupName: string | null;
  applicationId: string | null;
  secret: string | null;
  redirectUri: string | null;
  tokens: GitLabTokens | null;
}

const LABEL = 'forgeB (GitLab)';
/** A token this close to its expiry is refreshed first. */
const EARLY_MS = 60_000;

export function gitLabClient(
  s: GitLabSettings,
  deps: ForgeHttpDeps & { clock: () => Date; saveTokens: (tokens: GitLabTokens) => Promise<void> },
): ForgeClient {
  const base = apiUrl(s.instanceUrl, '/api/v4');
  if (!s.tokens) throw new ForgeError(`${LABEL}: the connection has no access token yet (forgeB.update accessToken)`, 0);
  let tokens = s.tokens;

  const refresh = async () => {
    if (!tokens.refreshToken) throw new ForgeError(`${LABEL}: the access token expired and there is no refresh token`, 401);
    if (!s.applicationId || !s.secret) throw new ForgeError(`${LABEL}: refreshing the token needs the OAuth applicationId and secret`, 0);
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: tokens.refreshToken,
      client_id: s.applicationId,
      client_secret: s.secret,
      ...(s.redirectUri ? { redirect_uri: s.redirectUri } : {}),
    });
    const answer = await forgeJson(deps, LABEL, apiUrl(s.instanceUrl, '/oauth/token'), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      secrets: [tokens.refreshToken, s.secret, tokens.accessToken],
    });
    const d = (answer.data ?? {}) as Record<string, unknown>;
    if (typeof d.access_token !== 'string' || d.access_token === '') throw new ForgeError(`${LABEL} answered the refresh without an access token`, 0);
    const expiresIn = typeof d.expires_in === 'number' ? d.expires_in : null;
    tokens = {
      accessToken: d.access_token,
      refreshToken: typeof d.refresh_token === 'string' && d.refresh_token !== '' ? d.refresh_token : tokens.refreshToken,
      expiresAt: expiresIn === null ? null : new Date(deps.clock().getTime() + expiresIn * 1000).toISOString(),
    };
    await deps.saveTokens(tokens);
  };

  /** A GET with the current token; an expired or refused OAuth token is refreshed once. */
  const get = async (url: string) => {
    if (tokens.refreshToken && tokens.expiresAt && Date.parse(tokens.expiresAt) - EARLY_MS <= deps.clock().getTime()) await refresh();
    const call = () => forgeJson(deps, LABEL, url, { headers: { authorization: `Bearer ${tokens.accessToken}` }, secrets: [tokens.accessToken] });
    try {
      return await call();
    } catch (err) {
      if (!(err instanceof ForgeError) || err.status !== 401 || !tokens.refreshToken) throw err;
      await refresh();
      return call();
    }
  };

  const list = (first: string) =>
    allPages(
      first,
      async (url) => {
        const answer = await get(url);
        const next = answer.headers['x-next-page'];
        const page = typeof next === 'string' && /^\d+$/.test(next.trim()) ? next.trim() : null;
        if (page === null) return { items: asArray(answer.data, LABEL), next: null };
        const nextUrl = new URL(url);
        nextUrl.searchParams.set('page', page);
        return { items: asArray(answer.data, LABEL), next: nextUrl.href };
      },
      base,
      LABEL,
    );

  const projectRef = (owner: string, repo: string) => seg(owner ? `${owner}/${repo}` : repo);

  const repositories = async (): Promise<ForgeRepository[]> => {
    const first = s.groupName
      ? apiUrl(base, `/groups/${seg(s.groupName)}/projects`, { include_subgroups: 'true', per_page: 100, page: 1 })
      : apiUrl(base, '/projects', { membership: 'true', per_page: 100, page: 1 });
    return (await list(first)).map(repository);
  };

  return {
    repositories,
    async branches(owner, repo): Promise<ForgeBranch[]> {
      const items = await list(apiUrl(base, `/projects/${projectRef(owner, repo)}/repository/branches`, { per_page: 100, page: 1 }));
      return items.map((b) => ({ name: String(b.name), commit: str((b.commit as Record<string, unknown> | undefined)?.id) }));
    },
    async testConnection() {
      return { repositories: (await repositories()).length };
    },
    async cloneLogin(owner, repo) {
      const answer = await get(apiUrl(base, `/projects/${projectRef(owner, repo)}`));
      let url = str((answer.data as Record<string, unknown> | null)?.http_url_to_repo);
      if (!url) throw new ForgeError(`${LABEL} gave no clone address for ${owner}/${repo}`, 0);
      // The instance may give its public address; the platform reaches it at the internal one.
      if (s.instanceUrl !== s.publicUrl && url.startsWith(`${s.publicUrl}/`)) url = `${s.instanceUrl}${url.slice(s.publicUrl.length)}`;
      return { url, username: 'oauth2', password: tokens.accessToken };
    },
    async apiToken() {
      if (tokens.refreshToken && tokens.expiresAt && Date.parse(tokens.expiresAt) - EARLY_MS <= deps.clock().getTime()) await refresh();
      return tokens.accessToken;
    },
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function repository(r: Record<string, unknown>): ForgeRepository {
  const namespace = r.namespace as Record<string, unknown> | undefined;
  return {
    id: String(r.id),
    name: String(r.path ?? r.name),
    fullName: String(r.path_with_namespace ?? r.name),
    owner: String(namespace?.full_path ?? ''),
    defaultBranch: str(r.default_branch),
    private: r.visibility !== 'public',
    cloneUrl: str(r.http_url_to_repo),
  };
}
