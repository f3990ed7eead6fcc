export { WebhookDeliveries, KEEP_DELIVERIES, REPLAY_WINDOW_MS } from './deliveries.js';
export { WebhookReceiver, webhookPrincipal, type WebhookRequest, type WorkloadDeployer } from './receiver.js';
export { type ForgeSource, signatureFor } from './signatures.js';
export { WebhookDeliveryReads } from './delivery-reads.js';
export { buildWebhooks, type WebhookDeploys } from './wiring.js';
