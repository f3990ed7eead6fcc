import { randomBytes } from 'node:crypto';
import { refuseGitBranch } from '@skiff/domain';
import type { Application, PreviewDeployment } from '@skiff/db';
import { DomainError } from '../../errors.js';
import type { DomainService } from '../domains/domains.js';
import type { PreviewService } from '../applications/previews.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ForgeNotifier, PullRequestTarget } from './forge-notifier.js';
import type { PreviewReports } from './preview-reports.js';
import type { DeferredDeploys } from '../deployments/deferred-deploys.js';
import type { WebhookDeliveries } from './deliveries.js';
import type { Principal } from '../../authz/principal.js';
import type { ForgeEvent, PullRequestEvent } from './payloads.js';
import { webhookPrincipal } from './principal.js';
import { organizationOf, type WebhookWorkload } from './workloads.js';

/** Previews per application when `previewLimit` is not set (REFERENCE.md). */
export const DEFAULT_PREVIEW_LIMIT = 3;

export interface PreviewOutcome {
  decision: 'preview' | 'ignored' | 'refused';
  reason: string;
  deploymentId: string | null;
  /** The deploy's own work (the forge login, the command), run once the delivery is recorded. */
  start?: () => Promise<void>;
}

/** `preview-<appName>-<6 hex>`, within the 63 characters of an app name. */
export function previewAppName(appName: string, suffix = randomBytes(3).toString('hex')): string {
  return `preview-${appName.slice(0, 63 - 'preview-'.length - 7)}-${suffix}`;
}

/** The preview's host under the application's `previewWildcard` (`*.<base>`), or null. */
export function previewHost(wildcard: string | null, appName: string): string | null {
  if (!wildcard?.startsWith('*.')) return null;
  return `${appName}.${wildcard.slice(2)}`.toLowerCase();
}

const ignored = (reason: string): PreviewOutcome => ({ decision: 'ignored', reason: `ignored: ${reason}`, deploymentId: null });

/** Queues a preview's deploy (DeploymentService.deployPreview). */
export type PreviewDeployer = (p: Principal, previewDeploymentId: string, input: { title: string; reserved?: string }) => Promise<{ deploymentId: string }>;

/**
 * Pull/merge request events of applications with `isPreviewDeploymentsActive`: opened creates
 * the preview record (named per REFERENCE.md) and its domain under `previewWildcard` (with
 * `previewPath`, `previewPort`, `previewHttps`, `previewCertificateType`), at most
 * `previewLimit`, and deploys it (previewApplication: the parent's build settings at the pull
 * request's branch, with previewEnv and previewBuildArgs/Secrets); updated redeploys it; closed
 * or merged removes it with its service, domains and proxy routes (PreviewService.delete).
 * `previewLabels`, when set, lets only pull requests carrying one of them have a preview;
 * `previewRequireCollaboratorPermissions` asks the forge whether the author of a pull request
 * from a fork may write to the repository. The deploy's forge login is minted after the answer
 * (DeferredDeploys). The forge gets one comment per pull request, edited as the preview moves,
 * and the head commit's status `skiff/preview` (pending, then success or failure with the URL).
 */
export class PreviewHooks {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly previews: PreviewService,
    private readonly domains: DomainService,
    private readonly notifier: ForgeNotifier,
    private readonly reports: PreviewReports,
    private readonly deferred: DeferredDeploys,
    private readonly deployPreview: PreviewDeployer,
    private readonly deliveries: WebhookDeliveries,
  ) {}

  private get db() {
    return this.deps.db;
  }

  async handle(source: string, w: WebhookWorkload, event: ForgeEvent): Promise<PreviewOutcome> {
    const pr = event.pullRequest!;
    // The API ties preview settings and records to applications (api.md: a preview deployment belongs to an applicationId).
    if (w.kind !== 'application') return ignored(`pull request #${pr.number}: compose stacks have no preview settings (previews belong to applications)`);
    const app = w.row as unknown as Application;
    if (!app.isPreviewDeploymentsActive) return ignored('preview deployments are off for this application');
    if (pr.action === 'other') return ignored(`pull request #${pr.number} event does not change its preview`);
    const target: PullRequestTarget = { source, workload: app, repository: event.repository ?? '', number: pr.number, url: pr.url || undefined };
    if (pr.action !== 'closed') {
      const refusal = await this.mayHavePreview(app, target, pr);
      if (refusal) return refusal;
    }
    const principal = webhookPrincipal(await organizationOf(this.db, app.environmentId));
    const existing = await this.db
      .selectFrom('previewDeployments')
      .selectAll()
      .where('applicationId', '=', app.id)
      .where('pullRequestId', '=', pr.id || pr.number)
      .executeTakeFirst();

    if (pr.action === 'closed') {
      if (!existing) return ignored(`pull request #${pr.number} has no preview`);
      await this.previews.delete(principal, existing.id);
      this.reports.tell(target, { commentId: existing.commentId }, `Preview \`${existing.appName}\` removed: the pull request was closed.`);
      return { decision: 'preview', reason: `preview: removed ${existing.appName} (pull request #${pr.number} closed)`, deploymentId: null };
    }

    if (existing) {
      const updated = await this.db
        .updateTable('previewDeployments')
        .set({ ...this.headOf(event, pr), pullRequestTitle: pr.title.slice(0, 255) })
        .where('id', '=', existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      const queued = await this.queueDeploy(principal, target, updated, await this.reports.urlOf(existing.id));
      return { decision: 'preview', reason: `preview: redeploys ${existing.appName} for pull request #${pr.number} (${pr.headCommit?.slice(0, 7) ?? pr.headBranch})`, ...queued };
    }

    const limit = app.previewLimit ?? DEFAULT_PREVIEW_LIMIT;
    const { count } = await this.db
      .selectFrom('previewDeployments')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('applicationId', '=', app.id)
      .executeTakeFirstOrThrow();
    if (Number(count) >= limit) {
      const why = `the application has ${count} previews, its previewLimit is ${limit}`;
      this.reports.tell(target, { commentId: null }, `No preview for this pull request: ${why}. Close another pull request or raise previewLimit.`);
      return { decision: 'refused', reason: `refused: preview for pull request #${pr.number}: ${why}`, deploymentId: null };
    }
    const created = await this.create(app, event, pr);
    const host = previewHost(app.previewWildcard, created.appName);
    let url: string | null = null;
    let note = '';
    if (host) {
      try {
        await this.domains.create(principal, {
          host,
          path: app.previewPath,
          port: app.previewPort,
          https: app.previewHttps ?? false,
          certificateType: (app.previewCertificateType as 'acme' | 'none' | 'custom' | null) ?? 'none',
          previewDeploymentId: created.id,
        });
        url = `${app.previewHttps ? 'https' : 'http'}://${host}${app.previewPath ?? ''}`;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        note = `; its domain was refused: ${err.message}`;
      }
    }
    const queued = await this.queueDeploy(principal, target, created, url);
    return { decision: 'preview', reason: `preview: created ${created.appName}${url ? ` at ${url}` : ''}${note}`, ...queued };
  }

  /** A refusal when the pull request may not have a preview (labels, collaborator check), else null. */
  private async mayHavePreview(app: Application, target: PullRequestTarget, pr: PullRequestEvent): Promise<PreviewOutcome | null> {
    // The branch comes from the delivery: one git would read as an option or a revision is refused here, before anything is recorded.
    const badBranch = refuseGitBranch(pr.headBranch);
    if (badBranch) return { decision: 'refused', reason: `refused: pull request #${pr.number}: ${badBranch}`, deploymentId: null };
    const wanted = (app.previewLabels ?? []).filter((l) => l.trim() !== '');
    if (wanted.length > 0 && !(pr.labels ?? []).some((l) => wanted.includes(l))) {
      return ignored(`pull request #${pr.number} has none of the labels ${wanted.join(', ')} (previewLabels)`);
    }
    const forkRefusal = await this.collaboratorRefusal(app, target, pr);
    if (forkRefusal) return forkRefusal;
    if (pr.fromFork && !pr.headCloneUrl) {
      return { decision: 'refused', reason: `refused: pull request #${pr.number} comes from a fork whose clone address the delivery does not carry`, deploymentId: null };
    }
    return null;
  }

  /** With `previewRequireCollaboratorPermissions`, a refusal when the author of a pull request not known to be from the repository itself may not write to it. */
  private async collaboratorRefusal(app: Application, target: PullRequestTarget, pr: PullRequestEvent): Promise<PreviewOutcome | null> {
    if (!app.previewRequireCollaboratorPermissions || pr.fromFork === false) return null;
    const refused = (why: string): PreviewOutcome => ({
      decision: 'refused',
      reason: `refused: pull request #${pr.number} ${why}, and previewRequireCollaboratorPermissions is set`,
      deploymentId: null,
    });
    if (!pr.author) return refused('does not name its author');
    try {
      if (await this.notifier.collaborator(target, pr.author)) return null;
    } catch (err) {
      return refused(`could not be checked (${err instanceof Error ? err.message : String(err)})`);
    }
    return refused(`comes from ${pr.author}, who may not write to the repository`);
  }

  /** Records the preview's deployment now; its login and command come after the answer, then the forge is told as it moves. */
  private async queueDeploy(principal: Principal, target: PullRequestTarget, preview: PreviewDeployment, url: string | null) {
    const title = `Preview: pull request #${preview.pullRequestNumber}${preview.headCommit ? ` (${preview.headCommit.slice(0, 7)})` : ''}`;
    const deploymentId = await this.deferred.reserve({ kind: 'application', id: preview.applicationId }, { title, previewDeploymentId: preview.id });
    await this.reports.pending(preview.id);
    const start = async () => {
      this.reports.started(target, preview, deploymentId, url);
      await this.deferred.start(deploymentId, () => this.deployPreview(principal, preview.id, { title, reserved: deploymentId }), (reason) =>
        this.deliveries.refused(deploymentId, reason),
      );
    };
    return { deploymentId, start };
  }

  /** Where the preview is built from: the head branch and commit, in the fork when the pull request comes from one. */
  private headOf(event: ForgeEvent, pr: PullRequestEvent) {
    return {
      branch: pr.headBranch,
      headCommit: pr.headCommit?.slice(0, 64) ?? null,
      forgeRepository: event.repository?.slice(0, 512) ?? null,
      forkCloneUrl: pr.fromFork ? pr.headCloneUrl : null,
    };
  }

  private create(app: Application, event: ForgeEvent, pr: PullRequestEvent) {
    return this.db
      .insertInto('previewDeployments')
      .values({
        id: this.deps.ids('prv'),
        applicationId: app.id,
        appName: previewAppName(app.appName),
        ...this.headOf(event, pr),
        pullRequestId: pr.id || pr.number,
        pullRequestNumber: pr.number,
        pullRequestUrl: pr.url.slice(0, 2048),
        pullRequestTitle: pr.title.slice(0, 255),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }
}
