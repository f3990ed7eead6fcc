import type { Application, Db, GitProvider } from '@skiff/db';
import { type OutboundPolicy, outboundFetch } from '@skiff/outbound';
import type { SecretBox } from '../../crypto/secret-box.js';
import { bitbucketLogin } from '../forges/clients/bitbucket.js';

/** The pull request a message is about, and the application whose forge connection speaks. */
export interface PullRequestTarget {
  /** The route the event came through (`github`, `gitlab`, `bitbucket`, `gitea`). */
  source: string;
  workload: Application;
  /** `owner/name` as the delivery named it. */
  repository: string;
  number: string;
  /** The pull request's page (Bitbucket statuses need a link; the preview's address when it has one). */
  url?: string;
}

export type PreviewState = 'pending' | 'success' | 'failure';

/** Tells a forge about a pull request's preview, and asks it who may get one. */
export interface ForgeNotifier {
  /** Posts a comment on the pull request, or edits `commentId` (posting anew when it is gone); answers the comment's id. */
  comment(target: PullRequestTarget, text: string, commentId?: string | null): Promise<string | null>;
  /** Sets the commit status `skiff/preview` of the pull request's head commit. */
  status(target: PullRequestTarget, commit: string, state: PreviewState, url: string | null, description: string): Promise<void>;
  /** Whether `user` (login, or GitLab/Bitbucket account id) may write to the repository. */
  collaborator(target: PullRequestTarget, user: string): Promise<boolean>;
}

export const NO_FORGE_NOTIFIER: ForgeNotifier = { comment: async () => null, status: async () => undefined, collaborator: async () => false };

/**
 * Short-lived API tokens of connections whose credential is not stored as is: a GitHub App's
 * installation token, a GitLab OAuth access token (refreshed when it expires). Given by the
 * forge API clients (ForgeClient.apiToken); absent, those forges are not told.
 */
export interface ForgeTokens {
  forgeA?: (connection: GitProvider) => Promise<string>;
  forgeB?: (connection: GitProvider) => Promise<string>;
}

/** How one forge's API is spoken for a pull request. */
interface ForgeApi {
  authorization: string;
  commentCreate: string;
  commentEdit: (id: string) => string;
  editMethod: 'PATCH' | 'PUT';
  commentBody: (text: string) => unknown;
  status: (sha: string) => string;
  statusBody: (state: PreviewState, url: string | null, description: string) => unknown;
  permission: (user: string) => string;
  /** Whether the permission answer allows writing. */
  writes: (answer: Record<string, unknown>) => boolean;
}

const trimSlash = (url: string) => (url.endsWith('/') ? url.slice(0, -1) : url);
const seg = encodeURIComponent;
const CONTEXT = 'skiff/preview';
const GITHUB_STATE = { pending: 'pending', success: 'success', failure: 'failure' } as const;
const GITLAB_STATE = { pending: 'running', success: 'success', failure: 'failed' } as const;
const BITBUCKET_STATE = { pending: 'INPROGRESS', success: 'SUCCESSFUL', failure: 'FAILED' } as const;
const WRITE = new Set(['admin', 'write', 'maintain', 'owner']);

/**
 * Comments, commit statuses and collaborator checks through each forge's REST API, with the
 * workload's connection:
 * - GitHub `{apiUrl}/repos/{o}/{r}/issues/{n}/comments` (edit `PATCH …/issues/comments/{id}`),
 *   `POST …/statuses/{sha}`, `GET …/collaborators/{user}/permission` (installation token);
 * - GitLab `{url}/api/v4/projects/{id}/merge_requests/{iid}/notes` (edit `PUT …/notes/{id}`),
 *   `POST …/statuses/{sha}`, `GET …/members/all/{user id}` (Developer or above; OAuth token);
 * - Bitbucket `{apiUrl}/repositories/{w}/{slug}/pullrequests/{id}/comments` (edit `PUT …/{id}`),
 *   `POST …/commit/{sha}/statuses/build`, `GET …/permissions-config/users/{account}` (Basic, as
 *   the API client: email and API token, or username and app password);
 * - Gitea `{url}/api/v1/repos/{o}/{r}/issues/{n}/comments` (edit `PATCH …/issues/comments/{id}`),
 *   `POST …/statuses/{sha}`, `GET …/collaborators/{user}/permission` (`token` header).
 * Calls go through the outbound policy, follow no redirect, and end within 10 s.
 */
export class ForgeCommentClient implements ForgeNotifier {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly policy: OutboundPolicy,
    private readonly tokens: ForgeTokens = {},
  ) {}

  async comment(target: PullRequestTarget, text: string, commentId?: string | null): Promise<string | null> {
    const api = await this.api(target);
    if (!api) return null;
    if (commentId) {
      const edited = await this.send(api, api.editMethod, api.commentEdit(commentId), api.commentBody(text));
      // A comment someone deleted is posted anew.
      if (edited.status < 300) return commentId;
      if (edited.status !== 404) throw new Error(`the forge answered ${edited.status} to the preview comment's edit`);
    }
    const created = await this.send(api, 'POST', api.commentCreate, api.commentBody(text));
    if (created.status >= 300) throw new Error(`the forge answered ${created.status} to the preview comment`);
    const id = created.data.id;
    return typeof id === 'number' || typeof id === 'string' ? String(id) : null;
  }

  async status(target: PullRequestTarget, commit: string, state: PreviewState, url: string | null, description: string): Promise<void> {
    const api = await this.api(target);
    if (!api) return;
    const answer = await this.send(api, 'POST', api.status(commit), api.statusBody(state, url, description.slice(0, 140)));
    if (answer.status >= 300) throw new Error(`the forge answered ${answer.status} to the preview's commit status`);
  }

  async collaborator(target: PullRequestTarget, user: string): Promise<boolean> {
    const api = await this.api(target);
    if (!api) throw new Error('the connection cannot ask the forge (no credentials)');
    const answer = await this.send(api, 'GET', api.permission(user), undefined);
    if (answer.status === 404) return false;
    if (answer.status >= 300) throw new Error(`the forge answered ${answer.status} to the collaborator check`);
    return api.writes(answer.data);
  }

  private async send(api: ForgeApi, method: string, url: string, body: unknown): Promise<{ status: number; data: Record<string, unknown> }> {
    const answer = await outboundFetch(url, {
      policy: this.policy,
      method,
      maxBytes: 256 * 1024,
      timeoutMs: 10_000,
      headers: { authorization: api.authorization, 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'skiff' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(answer.body.toString('utf8'));
      if (parsed && typeof parsed === 'object') data = parsed as Record<string, unknown>;
    } catch {
      // An empty or non-JSON answer carries nothing read here.
    }
    return { status: answer.status, data };
  }

  private async connection(id: string | null): Promise<{ row: GitProvider; config: Record<string, unknown>; secrets: Record<string, unknown> } | null> {
    if (!id) return null;
    const row = await this.db.selectFrom('gitProviders').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    return { row, config: row.config, secrets: JSON.parse(this.secrets.open(row.secrets)) as Record<string, unknown> };
  }

  private async api(t: PullRequestTarget): Promise<ForgeApi | null> {
    const app = t.workload;
    const [owner, name] = t.repository.split('/');
    const githubLike = (base: string, authorization: string, repo: string): ForgeApi => ({
      authorization,
      commentCreate: `${repo}/issues/${seg(t.number)}/comments`,
      commentEdit: (id) => `${repo}/issues/comments/${seg(id)}`,
      editMethod: 'PATCH',
      commentBody: (text) => ({ body: text }),
      status: (sha) => `${repo}/statuses/${seg(sha)}`,
      statusBody: (state, url, description) => ({ state: GITHUB_STATE[state], ...(url ? { target_url: url } : {}), description, context: CONTEXT }),
      permission: (user) => `${repo}/collaborators/${seg(user)}/permission`,
      writes: (a) => WRITE.has(String(a.permission ?? '')) || WRITE.has(String(a.role_name ?? '')),
    });
    switch (app.sourceType) {
      case 'forgeA': {
        const c = await this.connection(app.forgeAId);
        if (!c || !this.tokens.forgeA) return null;
        const base = trimSlash(String(c.config.apiUrl ?? 'https://api.github.com'));
        return githubLike(base, `Bearer ${await this.tokens.forgeA(c.row)}`, `${base}/repos/${seg(owner!)}/${seg(name!)}`);
      }
      case 'forgeB': {
        const c = await this.connection(app.forgeBId);
        if (!c || !this.tokens.forgeB || app.forgeBProjectId === null) return null;
        const project = `${trimSlash(String(c.config.forgeBInternalUrl ?? c.config.forgeBUrl))}/api/v4/projects/${app.forgeBProjectId}`;
        return {
          authorization: `Bearer ${await this.tokens.forgeB(c.row)}`,
          commentCreate: `${project}/merge_requests/${seg(t.number)}/notes`,
          commentEdit: (id) => `${project}/merge_requests/${seg(t.number)}/notes/${seg(id)}`,
          editMethod: 'PUT',
          commentBody: (text) => ({ body: text }),
          status: (sha) => `${project}/statuses/${seg(sha)}`,
          statusBody: (state, url, description) => ({ state: GITLAB_STATE[state], ...(url ? { target_url: url } : {}), description, name: CONTEXT }),
          permission: (user) => `${project}/members/all/${seg(user)}`,
          // Developer (30) and above may push.
          writes: (a) => typeof a.access_level === 'number' && a.access_level >= 30,
        };
      }
      case 'forgeC': {
        const c = await this.connection(app.forgeCId);
        if (!c) return null;
        const base = trimSlash(String(c.config.apiUrl ?? 'https://api.bitbucket.org/2.0'));
        // The API client's login: `email:API token` or `username:app password`, as Basic.
        const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);
        let login: { user: string; secret: string };
        try {
          login = bitbucketLogin({ username: text(c.config.forgeCUsername), email: text(c.config.forgeCEmail), appPassword: text(c.secrets.appPassword), apiToken: text(c.secrets.apiToken) });
        } catch {
          return null;
        }
        const authorization = `Basic ${Buffer.from(`${login.user}:${login.secret}`).toString('base64')}`;
        const repo = `${base}/repositories/${seg(owner!)}/${seg(app.forgeCRepositorySlug ?? name!)}`;
        return {
          authorization,
          commentCreate: `${repo}/pullrequests/${seg(t.number)}/comments`,
          commentEdit: (id) => `${repo}/pullrequests/${seg(t.number)}/comments/${seg(id)}`,
          editMethod: 'PUT',
          commentBody: (text) => ({ content: { raw: text } }),
          status: (sha) => `${repo}/commit/${seg(sha)}/statuses/build`,
          // Bitbucket requires a link: the pull request's own when the preview has no address.
          statusBody: (state, url, description) => ({ key: CONTEXT, state: BITBUCKET_STATE[state], url: url ?? t.url ?? 'https://bitbucket.org', name: 'Skiff preview', description }),
          permission: (user) => `${repo}/permissions-config/users/${seg(user)}`,
          writes: (a) => WRITE.has(String(a.permission ?? '')),
        };
      }
      case 'forgeD': {
        const c = await this.connection(app.forgeDId);
        const token = c?.secrets.accessToken;
        if (!c || typeof token !== 'string' || !token) return null;
        const base = `${trimSlash(String(c.config.forgeDInternalUrl ?? c.config.forgeDUrl))}/api/v1`;
        return githubLike(base, `token ${token}`, `${base}/repos/${seg(owner!)}/${seg(name!)}`);
      }
      default:
        return null;
    }
  }
}
