export { WebhookDeliveries, KEEP_DELIVERIES, REPLAY_WINDOW_MS } from './deliveries.js';
export { WebhookReceiver, type WebhookRequest, type WorkloadDeployer } from './receiver.js';
export { webhookPrincipal } from './principal.js';
export { ForgeCommentClient, type ForgeNotifier, type ForgeTokens, NO_FORGE_NOTIFIER } from './forge-notifier.js';
export { DEFAULT_PREVIEW_LIMIT, previewAppName, previewHost } from './previews.js';
export { type ForgeSource, signatureFor } from './signatures.js';
export { WebhookDeliveryReads } from './delivery-reads.js';
export { buildWebhooks, type WebhookDeploys } from './wiring.js';
