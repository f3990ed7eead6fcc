import type { Selectable } from 'kysely';
import type { CreatedAt } from './columns.js';

export type WebhookDecision = 'deployed' | 'ignored' | 'refused' | 'preview';

/** One received event and what it did to one workload (migration 2026-12-07T16-00-webhook-deliveries). */
export interface WebhookDeliveriesTable {
  id: string;
  /** The workload: exactly one of applicationId and composeId is set. */
  applicationId: string | null;
  composeId: string | null;
  /** `github`, `gitlab`, `bitbucket`, `gitea` or `token` (the generic route). */
  source: string;
  deliveryId: string | null;
  /** `push`, `tag`, `pull_request`, `ping`… as the forge names it. */
  event: string;
  ref: string | null;
  commit: string | null;
  decision: WebhookDecision;
  reason: string;
  deploymentId: string | null;
  createdAt: CreatedAt;
}

/** Delivery keys received within the replay window. */
export interface WebhookSeenTable {
  key: string;
  seenAt: Date | string;
}

export type WebhookDelivery = Selectable<WebhookDeliveriesTable>;
