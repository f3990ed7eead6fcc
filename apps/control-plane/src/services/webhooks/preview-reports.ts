import type { Application, PreviewDeployment } from '@skiff/db';
import type { Logger } from 'pino';
import type { ServiceDeps } from '../shared/deps.js';
import type { ForgeNotifier, PreviewState, PullRequestTarget } from './forge-notifier.js';

/** How often a preview's deployment is looked at until it ends, and for how long at most. */
const FOLLOW_EVERY_MS = 1000;
const FOLLOW_FOR_MS = 2 * 3600_000;

const ROUTE_OF: Record<string, string> = { forgeA: 'github', forgeB: 'gitlab', forgeC: 'bitbucket', forgeD: 'gitea' };
const DESCRIPTION: Record<PreviewState, string> = { pending: 'Deploying the preview', success: 'Preview ready', failure: 'Preview failed' };

/**
 * What the forge is told about previews: one comment per pull request (edited as the preview
 * moves; its id is kept on the preview) and the head commit's status `skiff/preview`.
 * The final state is durable: a preview's `forgeState` stays `pending` until its newest
 * deployment's end is told, and telling it first claims the row (pending → success/failure),
 * so it is told once, whether by the process that queued the deploy or by `resume` after a restart.
 */
export class PreviewReports {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly notifier: ForgeNotifier,
    private readonly log: Logger,
  ) {}

  /** Messages to the forge, one after the other per pull request (a comment's edits follow its post). */
  private readonly told = new Map<string, Promise<void>>();

  private get db() {
    return this.deps.db;
  }

  /** Marks the preview pending (before its deployment is queued, so a restart knows the forge waits). */
  async pending(previewId: string): Promise<void> {
    await this.db.updateTable('previewDeployments').set({ forgeState: 'pending' }).where('id', '=', previewId).execute();
  }

  /** Posts the pending state, then follows the deployment until it ends and tells its end. */
  started(target: PullRequestTarget, preview: PreviewDeployment, deploymentId: string, url: string | null) {
    this.report(target, preview, 'pending', url, `Preview \`${preview.appName}\` is being deployed${url ? ` at ${url}` : ''}.`);
    this.follow(preview.id, deploymentId);
  }

  /** At boot: tells the forge the end of previews left pending, and follows those still deploying. */
  async resume(): Promise<void> {
    const waiting = await this.db.selectFrom('previewDeployments').select('id').where('forgeState', '=', 'pending').execute();
    for (const { id } of waiting) {
      const d = await this.newestDeployment(id);
      if (!d) continue;
      if (ended(d.status)) await this.settle(id);
      else this.follow(id, d.id);
    }
  }

  /**
   * Tells the forge the end of the preview's newest deployment, once: the row is claimed
   * (pending → the final state) before the forge is told. Nothing when it has not ended.
   */
  async settle(previewId: string): Promise<void> {
    const d = await this.newestDeployment(previewId);
    if (!d || !ended(d.status)) return;
    const state: PreviewState = d.status === 'done' ? 'success' : 'failure';
    const preview = await this.db
      .updateTable('previewDeployments')
      .set({ forgeState: state })
      .where('id', '=', previewId)
      .where('forgeState', '=', 'pending')
      .returningAll()
      .executeTakeFirst();
    if (!preview) return;
    const target = await this.targetOf(preview);
    if (!target) return;
    const url = await this.urlOf(preview.id);
    const at = url ? ` at ${url}` : '';
    const text =
      d.status === 'done'
        ? `Preview \`${preview.appName}\` is ready${at}.`
        : d.status === 'cancelled'
          ? `Preview \`${preview.appName}\`: its deployment was cancelled.`
          : `Preview \`${preview.appName}\` failed to deploy: ${(d.reason ?? 'no reason given').slice(0, 500)}`;
    this.report(target, preview, state, url, text);
    await this.told.get(preview.id);
  }

  /** The comment (edited when there is one) and the head commit's status. */
  report(target: PullRequestTarget, preview: PreviewDeployment, state: PreviewState, url: string | null, text: string) {
    const commit = preview.headCommit;
    this.chain(preview.id, async () => {
      if (commit) await this.notifier.status(target, commit, state, url, DESCRIPTION[state]);
    });
    this.tell(target, { previewId: preview.id }, text);
  }

  /**
   * A comment on the pull request, sent after the answer: the preview's comment (edited once
   * posted; its id is kept on the preview), or a comment of its own (`commentId` to edit, or null).
   */
  tell(target: PullRequestTarget, on: { previewId: string } | { commentId: string | null }, text: string) {
    const previewId = 'previewId' in on ? on.previewId : null;
    this.chain(previewId ?? `${target.workload.id}#${target.number}`, async () => {
      const stored = previewId
        ? ((await this.db.selectFrom('previewDeployments').select('commentId').where('id', '=', previewId).executeTakeFirst())?.commentId ?? null)
        : (on as { commentId: string | null }).commentId;
      const id = await this.notifier.comment(target, text, stored);
      if (previewId && id && id !== stored) await this.db.updateTable('previewDeployments').set({ commentId: id }).where('id', '=', previewId).execute();
    });
  }

  /** The address of a preview's first domain, or null. */
  async urlOf(previewId: string): Promise<string | null> {
    const d = await this.db.selectFrom('domains').select(['host', 'path', 'https']).where('previewDeploymentId', '=', previewId).orderBy('createdAt').executeTakeFirst();
    return d ? `${d.https ? 'https' : 'http'}://${d.host}${d.path && d.path !== '/' ? d.path : ''}` : null;
  }

  /** Waits in this process for `deploymentId` to end, then settles the preview. */
  private follow(previewId: string, deploymentId: string) {
    const run = async () => {
      const until = Date.now() + FOLLOW_FOR_MS;
      while (Date.now() < until) {
        const d = await this.db.selectFrom('deployments').select('status').where('id', '=', deploymentId).executeTakeFirst();
        if (!d) return;
        if (ended(d.status)) return this.settle(previewId);
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_EVERY_MS));
      }
    };
    void run().catch((err: unknown) =>
      this.log.warn({ deploymentId, reason: err instanceof Error ? err.message : String(err) }, 'stopped following a preview deployment'),
    );
  }

  private newestDeployment(previewId: string) {
    return this.db
      .selectFrom('deployments')
      .select(['id', 'status', 'reason'])
      .where('previewDeploymentId', '=', previewId)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
  }

  /** The pull request a stored preview is about, addressed through its parent's forge connection. */
  private async targetOf(preview: PreviewDeployment): Promise<PullRequestTarget | null> {
    const app = await this.db.selectFrom('applications').selectAll().where('id', '=', preview.applicationId).executeTakeFirst();
    const source = app ? ROUTE_OF[app.sourceType] : undefined;
    if (!app || !source || !preview.forgeRepository) return null;
    return {
      source,
      workload: app as Application,
      repository: preview.forgeRepository,
      number: preview.pullRequestNumber,
      url: preview.pullRequestUrl || undefined,
    };
  }

  private chain(key: string, step: () => Promise<void>) {
    const next = (this.told.get(key) ?? Promise.resolve())
      .then(step)
      .catch((err: unknown) => this.log.warn({ key, reason: err instanceof Error ? err.message : String(err) }, 'the forge was not told about a preview'));
    this.told.set(key, next);
    void next.finally(() => {
      if (this.told.get(key) === next) this.told.delete(key);
    });
  }
}

const ended = (status: string) => status === 'done' || status === 'error' || status === 'cancelled';
