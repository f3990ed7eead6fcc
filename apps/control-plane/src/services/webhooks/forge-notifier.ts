import type { Application, Db, GitProvider } from '@skiff/db';
import { type OutboundPolicy, outboundFetch } from '@skiff/outbound';
import type { SecretBox } from '../../crypto/secret-box.js';

/** The pull request a message is about, and the application whose forge connection speaks. */
export interface PullRequestTarget {
  /** The route the event came through (`github`, `gitlab`, `bitbucket`, `gitea`). */
  source: string;
  workload: Application;
  /** `owner/name` as the delivery named it. */
  repository: string;
  number: string;
}

/** Tells a forge about a pull request's preview (a comment on it). */
export interface ForgeNotifier {
  comment(target: PullRequestTarget, text: string): Promise<void>;
}

export const NO_FORGE_NOTIFIER: ForgeNotifier = { comment: async () => undefined };

/**
 * Short-lived API tokens of connections whose credential is not stored as is: a GitHub App's
 * installation token, a GitLab OAuth access token. Given by the forge API clients; absent,
 * those forges get no comment.
 */
export interface ForgeTokens {
  forgeA?: (connection: GitProvider) => Promise<string>;
  forgeB?: (connection: GitProvider) => Promise<string>;
}

interface ApiCall {
  url: string;
  authorization: string;
  body: unknown;
}

const trimSlash = (url: string) => (url.endsWith('/') ? url.slice(0, -1) : url);
const seg = encodeURIComponent;

/**
 * Comments through each forge's REST API, with the workload's connection:
 * GitHub `POST {apiUrl}/repos/{owner}/{repo}/issues/{n}/comments` (installation token);
 * GitLab `POST {url}/api/v4/projects/{id}/merge_requests/{iid}/notes` (OAuth token);
 * Bitbucket `POST {apiUrl}/repositories/{workspace}/{slug}/pullrequests/{id}/comments`
 * (API token as Bearer, or username and app password as Basic);
 * Gitea `POST {url}/api/v1/repos/{owner}/{repo}/issues/{n}/comments` (`token` header).
 * Calls go through the outbound policy, follow no redirect, and end within 10 s.
 */
export class ForgeCommentClient implements ForgeNotifier {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
    private readonly policy: OutboundPolicy,
    private readonly tokens: ForgeTokens = {},
  ) {}

  async comment(target: PullRequestTarget, text: string): Promise<void> {
    const call = await this.call(target, text);
    if (!call) return;
    const answer = await outboundFetch(call.url, {
      policy: this.policy,
      method: 'POST',
      maxBytes: 64 * 1024,
      timeoutMs: 10_000,
      headers: { authorization: call.authorization, 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'skiff' },
      body: JSON.stringify(call.body),
    });
    if (answer.status >= 300) throw new Error(`the forge answered ${answer.status} to the preview comment`);
  }

  private async connection(id: string | null): Promise<{ row: GitProvider; config: Record<string, unknown>; secrets: Record<string, unknown> } | null> {
    if (!id) return null;
    const row = await this.db.selectFrom('gitProviders').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) return null;
    return { row, config: row.config, secrets: JSON.parse(this.secrets.open(row.secrets)) as Record<string, unknown> };
  }

  private async call(t: PullRequestTarget, text: string): Promise<ApiCall | null> {
    const app = t.workload;
    const [owner, name] = t.repository.split('/');
    switch (app.sourceType) {
      case 'forgeA': {
        const c = await this.connection(app.forgeAId);
        if (!c || !this.tokens.forgeA) return null;
        const base = trimSlash(String(c.config.apiUrl ?? 'https://api.github.com'));
        return { url: `${base}/repos/${seg(owner!)}/${seg(name!)}/issues/${seg(t.number)}/comments`, authorization: `Bearer ${await this.tokens.forgeA(c.row)}`, body: { body: text } };
      }
      case 'forgeB': {
        const c = await this.connection(app.forgeBId);
        if (!c || !this.tokens.forgeB || app.forgeBProjectId === null) return null;
        const base = trimSlash(String(c.config.forgeBInternalUrl ?? c.config.forgeBUrl));
        return { url: `${base}/api/v4/projects/${app.forgeBProjectId}/merge_requests/${seg(t.number)}/notes`, authorization: `Bearer ${await this.tokens.forgeB(c.row)}`, body: { body: text } };
      }
      case 'forgeC': {
        const c = await this.connection(app.forgeCId);
        if (!c) return null;
        const base = trimSlash(String(c.config.apiUrl ?? 'https://api.bitbucket.org/2.0'));
        const auth =
          typeof c.secrets.apiToken === 'string' && c.secrets.apiToken
            ? `Bearer ${c.secrets.apiToken}`
            : typeof c.secrets.appPassword === 'string' && c.secrets.appPassword
              ? `Basic ${Buffer.from(`${String(c.config.forgeCUsername ?? '')}:${c.secrets.appPassword}`).toString('base64')}`
              : null;
        if (!auth) return null;
        const slug = app.forgeCRepositorySlug ?? name!;
        return { url: `${base}/repositories/${seg(owner!)}/${seg(slug)}/pullrequests/${seg(t.number)}/comments`, authorization: auth, body: { content: { raw: text } } };
      }
      case 'forgeD': {
        const c = await this.connection(app.forgeDId);
        const token = c?.secrets.accessToken;
        if (!c || typeof token !== 'string' || !token) return null;
        const base = trimSlash(String(c.config.forgeDInternalUrl ?? c.config.forgeDUrl));
        return { url: `${base}/api/v1/repos/${seg(owner!)}/${seg(name!)}/issues/${seg(t.number)}/comments`, authorization: `token ${token}`, body: { body: text } };
      }
      default:
        return null;
    }
  }
}
