import type { Logger } from 'pino';
import type { Principal } from '../../authz/principal.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ServiceDeps } from '../shared/deps.js';
import { WebhookDeliveries } from './deliveries.js';
import { WebhookDeliveryReads } from './delivery-reads.js';
import { WebhookReceiver } from './receiver.js';

/** The deploy calls push-to-deploy queues through (the same as application.deploy and compose.deploy). */
export interface WebhookDeploys {
  application: (p: Principal, input: { applicationId: string; title: string }) => Promise<{ deploymentId: string }>;
  compose: (p: Principal, input: { composeId: string; title: string }) => Promise<{ deploymentId: string }>;
}

/** Push-to-deploy: the receiver behind the public routes, and the reads of what it decided. */
export function buildWebhooks(deps: ServiceDeps, access: ServiceAccess, deploys: WebhookDeploys, log: Logger) {
  const deliveries = new WebhookDeliveries(deps);
  const receiver = new WebhookReceiver(deps, deliveries, {
    deploy: async (p, w, title) =>
      (w.kind === 'application' ? await deploys.application(p, { applicationId: w.id, title }) : await deploys.compose(p, { composeId: w.id, title })).deploymentId,
  }, log.child({ component: 'webhooks' }));
  return { receiver, deliveries, reads: new WebhookDeliveryReads(access, deliveries, deps.secrets) };
}
