import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ServiceDeps } from '../shared/deps.js';
import { WebhookDeliveries } from './deliveries.js';
import { WebhookDeliveryReads } from './delivery-reads.js';
import { type WorkloadDeployer, WebhookReceiver } from './receiver.js';
import type { DomainService } from '../domains/domains.js';
import type { PreviewService } from '../applications/previews.js';
import { ForgeCommentClient, type ForgeNotifier, type ForgeTokens } from './forge-notifier.js';
import { PreviewHooks } from './previews.js';
import { PreviewReports } from './preview-reports.js';
import { PUBLIC_ONLY } from '@skiff/outbound';
import { DeferredDeploys } from '../deployments/deferred-deploys.js';
import { forgeSourceSettings, isForgeSource } from '../deployments/forge-sources.js';
import { ownerOfDeployment } from '../deployments/workloads.js';
import { webhookPrincipal } from './principal.js';
import { organizationOf, workloadById } from './workloads.js';

/**
 * The deploy calls push-to-deploy queues through (the same as application.deploy and
 * compose.deploy); `reserved`: a deployment recorded before (DeferredDeploys) that the deploy
 * takes instead of recording one.
 */
export interface WebhookDeploys {
  application: (p: Principal, input: { applicationId: string; title: string }, reserved?: string) => Promise<{ deploymentId: string }>;
  compose: (p: Principal, input: { composeId: string; title: string }, reserved?: string) => Promise<{ deploymentId: string }>;
  preview: (p: Principal, previewDeploymentId: string, input: { title: string; reserved?: string }) => Promise<{ deploymentId: string }>;
}

export interface PreviewParts {
  previews: PreviewService;
  domains: DomainService;
  /** How the forge is told (default: comments and statuses through each forge's API, ForgeCommentClient). */
  notifier?: ForgeNotifier;
  /** Installation and OAuth tokens for GitHub and GitLab (the forge API clients). */
  tokens?: ForgeTokens;
}

/** Push-to-deploy and previews: the receiver behind the public routes, and the reads of what it decided. */
export function buildWebhooks(deps: ServiceDeps, access: ServiceAccess, deploys: WebhookDeploys, parts: PreviewParts, log: Logger) {
  const deliveries = new WebhookDeliveries(deps);
  const hookLog = log.child({ component: 'webhooks' });
  const deferred = new DeferredDeploys(deps, hookLog);
  const notifier = parts.notifier ?? new ForgeCommentClient(deps.db, deps.secrets, deps.outbound ?? PUBLIC_ONLY, parts.tokens);
  const reports = new PreviewReports(deps, notifier, hookLog);
  const previews = new PreviewHooks(deps, parts.previews, parts.domains, notifier, reports, deferred, deploys.preview, deliveries);
  const run = (p: Principal, kind: 'application' | 'compose', id: string, title: string, reserved?: string) =>
    kind === 'application' ? deploys.application(p, { applicationId: id, title }, reserved) : deploys.compose(p, { composeId: id, title }, reserved);
  const deployer: WorkloadDeployer = {
    async deploy(p, w, title) {
      if (!isForgeSource(w.row.sourceType)) return { deploymentId: (await run(p, w.kind, w.row.id, title)).deploymentId };
      // The forge is asked for the clone login after the answer; what can be refused without it is refused now.
      forgeSourceSettings(w.row, w.kind);
      const deploymentId = await deferred.reserve({ kind: w.kind, id: w.row.id }, { title });
      return {
        deploymentId,
        start: () => deferred.start(deploymentId, () => run(p, w.kind, w.row.id, title, deploymentId), (reason) => deliveries.refused(deploymentId, reason)),
      };
    },
  };
  const receiver = new WebhookReceiver(deps, deliveries, deployer, hookLog, previews);

  /** Starts the deferred deploys a restart left without their command, and tells forges the previews' ends a restart left untold. */
  const resume = async () => {
    for (const d of await deferred.unstarted()) {
      const owner = ownerOfDeployment(d);
      const w = await workloadById(deps.db, owner.kind, owner.id);
      if (!w) continue;
      const p = webhookPrincipal(await organizationOf(deps.db, w.row.environmentId));
      const title = d.title ?? 'Deploy';
      const preview = d.previewDeploymentId;
      await deferred.start(d.id, () => (preview ? deploys.preview(p, preview, { title, reserved: d.id }) : run(p, owner.kind, owner.id, title, d.id)), (reason) =>
        deliveries.refused(d.id, reason),
      );
    }
    await reports.resume();
  };
  return { receiver, deliveries, resume, reads: new WebhookDeliveryReads(access, deliveries, deps.secrets) };
}
