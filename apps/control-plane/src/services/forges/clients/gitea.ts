/**
 * forgeD (Gitea and Forgejo; the API is `{instance}/api/v1`): a personal access token
 * (`Authorization: token …`). Listings use `page` and `limit` and follow the Link header,
 * stopping at a short page when the forge sends none.
 */
import { allPages, apiUrl, asArray, ForgeError, type ForgeHttpDeps, forgeJson, nextLink, seg } from './http.js';
import type { ForgeBranch, ForgeClient, ForgeRepository } from './types.js';

export interface GiteaSettings {
  /** The address the platform reaches the instance at (forgeDInternalUrl, else forgeDUrl). */
  instanceUrl: string;
  publicUrl: string;
  organizationName: string | null;
  accessToken: string | null;
}

const LABEL = 'forgeD (Gitea)';
const LIMIT = 50;

export function giteaClient(s: GiteaSettings, deps: ForgeHttpDeps): ForgeClient {
  const base = apiUrl(s.instanceUrl, '/api/v1');
  if (!s.accessToken) throw new ForgeError(`${LABEL}: the connection has no access token (forgeD.update accessToken)`, 0);
  const token = s.accessToken;
  const get = (url: string) => forgeJson(deps, LABEL, url, { headers: { authorization: `token ${token}` }, secrets: [token] });

  const list = (path: string) =>
    allPages(
      apiUrl(base, path, { page: 1, limit: LIMIT }),
      async (url) => {
        const answer = await get(url);
        const items = asArray(answer.data, LABEL);
        let next = nextLink(answer.headers.link);
        if (next === null && items.length >= LIMIT) {
          const following = new URL(url);
          following.searchParams.set('page', String(Number(following.searchParams.get('page') ?? '1') + 1));
          next = following.href;
        }
        return { items, next: items.length === 0 ? null : next };
      },
      base,
      LABEL,
    );

  const repositories = async (): Promise<ForgeRepository[]> =>
    (await list(s.organizationName ? `/orgs/${seg(s.organizationName)}/repos` : '/user/repos')).map(repository);

  return {
    repositories,
    async branches(owner, repo): Promise<ForgeBranch[]> {
      const items = await list(`/repos/${seg(owner)}/${seg(repo)}/branches`);
      return items.map((b) => ({ name: String(b.name), commit: str((b.commit as Record<string, unknown> | undefined)?.id) }));
    },
    async testConnection() {
      return { repositories: (await repositories()).length };
    },
    async cloneLogin(owner, repo) {
      const r = repository(((await get(apiUrl(base, `/repos/${seg(owner)}/${seg(repo)}`))).data ?? {}) as Record<string, unknown>);
      let url = r.cloneUrl;
      if (!url) throw new ForgeError(`${LABEL} gave no clone address for ${owner}/${repo}`, 0);
      if (s.instanceUrl !== s.publicUrl && url.startsWith(`${s.publicUrl}/`)) url = `${s.instanceUrl}${url.slice(s.publicUrl.length)}`;
      return { url, username: 'oauth2', password: token };
    },
    apiToken: async () => token,
  };
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

function repository(r: Record<string, unknown>): ForgeRepository {
  const owner = r.owner as Record<string, unknown> | undefined;
  return {
    id: String(r.id),
    name: String(r.name),
    fullName: String(r.full_name),
    owner: String(owner?.login ?? owner?.username ?? ''),
    defaultBranch: str(r.default_branch),
    private: r.private === true,
    cloneUrl: str(r.clone_url),
  };
}
