import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ServiceDeps } from '../shared/deps.js';
import { WebhookDeliveries } from './deliveries.js';
import { WebhookDeliveryReads } from './delivery-reads.js';
import { WebhookReceiver } from './receiver.js';
import type { DomainService } from '../domains/domains.js';
import type { PreviewService } from '../applications/previews.js';
import { ForgeCommentClient, type ForgeNotifier, type ForgeTokens } from './forge-notifier.js';
import { PreviewHooks } from './previews.js';
import { PUBLIC_ONLY } from '@skiff/outbound';

/** The deploy calls push-to-deploy queues through (the same as application.deploy and compose.deploy). */
export interface WebhookDeploys {
  application: (p: Principal, input: { applicationId: string; title: string }) => Promise<{ deploymentId: string }>;
  compose: (p: Principal, input: { composeId: string; title: string }) => Promise<{ deploymentId: string }>;
}

export interface PreviewParts {
  previews: PreviewService;
  domains: DomainService;
  /** How the forge is told (default: comments through each forge's API, ForgeCommentClient). */
  notifier?: ForgeNotifier;
  /** Installation and OAuth tokens for GitHub and GitLab comments (the forge API clients). */
  tokens?: ForgeTokens;
}

/** Push-to-deploy and previews: the receiver behind the public routes, and the reads of what it decided. */
export function buildWebhooks(deps: ServiceDeps, access: ServiceAccess, deploys: WebhookDeploys, parts: PreviewParts, log: Logger) {
  const deliveries = new WebhookDeliveries(deps);
  const hookLog = log.child({ component: 'webhooks' });
  const notifier = parts.notifier ?? new ForgeCommentClient(deps.db, deps.secrets, deps.outbound ?? PUBLIC_ONLY, parts.tokens);
  const previews = new PreviewHooks(deps, parts.previews, parts.domains, notifier, hookLog);
  const receiver = new WebhookReceiver(deps, deliveries, {
    deploy: async (p, w, title) =>
      (w.kind === 'application' ? await deploys.application(p, { applicationId: w.id, title }) : await deploys.compose(p, { composeId: w.id, title })).deploymentId,
  }, hookLog, previews);
  return { receiver, deliveries, reads: new WebhookDeliveryReads(access, deliveries, deps.secrets) };
}
