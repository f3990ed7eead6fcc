import { randomBytes } from 'node:crypto';
import type { Application } from '@skiff/db';
import type { Logger } from 'pino';
import { DomainError } from '../../errors.js';
import type { DomainService } from '../domains/domains.js';
import type { PreviewService } from '../applications/previews.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ForgeNotifier, PullRequestTarget } from './forge-notifier.js';
import type { ForgeEvent, PullRequestEvent } from './payloads.js';
import { webhookPrincipal } from './principal.js';
import { organizationOf, type WebhookWorkload } from './workloads.js';

/** Previews per application when `previewLimit` is not set (REFERENCE.md). */
export const DEFAULT_PREVIEW_LIMIT = 3;

export interface PreviewOutcome {
  decision: 'preview' | 'ignored' | 'refused';
  reason: string;
  deploymentId: null;
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

/**
 * Pull/merge request events of applications with `isPreviewDeploymentsActive`: opened creates
 * the preview record (named per REFERENCE.md) and its domain under `previewWildcard` (with
 * `previewPath`, `previewPort`, `previewHttps`, `previewCertificateType`), at most
 * `previewLimit`; updated refreshes its branch and title; closed or merged removes it with its
 * domains and proxy routes (PreviewService.delete). The forge is told each step.
 */
export class PreviewHooks {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly previews: PreviewService,
    private readonly domains: DomainService,
    private readonly notifier: ForgeNotifier,
    private readonly log: Logger,
  ) {}

  private get db() {
    return this.deps.db;
  }

  async handle(source: string, w: WebhookWorkload, event: ForgeEvent): Promise<PreviewOutcome> {
    const pr = event.pullRequest!;
    if (w.kind !== 'application') return ignored('previews of compose stacks are not built');
    const app = w.row as unknown as Application;
    if (!app.isPreviewDeploymentsActive) return ignored('preview deployments are off for this application');
    if (pr.action === 'other') return ignored(`pull request #${pr.number} event does not change its preview`);
    const target: PullRequestTarget = { source, workload: app, repository: event.repository ?? '', number: pr.number };
    // Collaborators cannot be asked of the forge here yet: with the setting on, a pull request
    // from a fork (or one whose origin the forge does not say) gets no preview at all.
    if (app.previewRequireCollaboratorPermissions && pr.action !== 'closed' && pr.fromFork !== false) {
      return {
        decision: 'refused',
        reason: `refused: pull request #${pr.number} ${pr.fromFork ? 'comes from a fork' : 'does not say where it comes from'}, and previewRequireCollaboratorPermissions is set`,
        deploymentId: null,
      };
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
      await this.tell(target, `Preview \`${existing.appName}\` removed: the pull request was closed.`);
      return { decision: 'preview', reason: `preview: removed ${existing.appName} (pull request #${pr.number} closed)`, deploymentId: null };
    }

    if (existing) {
      await this.db.updateTable('previewDeployments').set({ branch: pr.headBranch, pullRequestTitle: pr.title.slice(0, 255) }).where('id', '=', existing.id).execute();
      return { decision: 'preview', reason: `preview: ${existing.appName} follows pull request #${pr.number} (${pr.headCommit?.slice(0, 7) ?? pr.headBranch})`, deploymentId: null };
    }

    const limit = app.previewLimit ?? DEFAULT_PREVIEW_LIMIT;
    const { count } = await this.db
      .selectFrom('previewDeployments')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('applicationId', '=', app.id)
      .executeTakeFirstOrThrow();
    if (Number(count) >= limit) {
      const why = `the application has ${count} previews, its previewLimit is ${limit}`;
      await this.tell(target, `No preview for this pull request: ${why}. Close another pull request or raise previewLimit.`);
      return { decision: 'refused', reason: `refused: preview for pull request #${pr.number}: ${why}`, deploymentId: null };
    }
    const created = await this.create(app, pr);
    const host = previewHost(app.previewWildcard, created.appName);
    let url: string | null = null;
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
        await this.tell(target, `Preview \`${created.appName}\` created without a domain: ${err.message}`);
        return { decision: 'preview', reason: `preview: created ${created.appName}; its domain was refused: ${err.message}`, deploymentId: null };
      }
    }
    await this.tell(target, `Preview \`${created.appName}\` created${url ? ` at ${url}` : ''} (state: ${created.previewStatus}).`);
    return { decision: 'preview', reason: `preview: created ${created.appName}${url ? ` at ${url}` : ''}`, deploymentId: null };
  }

  private create(app: Application, pr: PullRequestEvent) {
    return this.db
      .insertInto('previewDeployments')
      .values({
        id: this.deps.ids('prv'),
        applicationId: app.id,
        appName: previewAppName(app.appName),
        branch: pr.headBranch,
        pullRequestId: pr.id || pr.number,
        pullRequestNumber: pr.number,
        pullRequestUrl: pr.url.slice(0, 2048),
        pullRequestTitle: pr.title.slice(0, 255),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A comment on the pull request, sent after the answer (the forge is not kept waiting); a failure is logged. */
  private async tell(target: PullRequestTarget, text: string) {
    void this.notifier.comment(target, text).catch((err: unknown) =>
      this.log.warn({ workload: target.workload.id, pullRequest: target.number, reason: err instanceof Error ? err.message : String(err) }, 'preview comment not sent'),
    );
  }
}
