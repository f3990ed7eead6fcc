import type { NotificationKind } from '@skiff/db';
import type { FLAGS } from '../flags.js';

/** The event kinds channels subscribe to: a notification's flags. */
export type EventKind = (typeof FLAGS)[number];

/**
 * One message about one event, as a person reads it in one glance: what happened, to which
 * workload, the outcome, and where to look further. Each channel kind renders it in its
 * service's format (plain text, HTML, Markdown, an embed).
 */
export interface EventMessage {
  kind: EventKind;
  /** e.g. "Deploy failed: shop-web". */
  title: string;
  /** A few lines: the outcome and the reason. */
  text: string;
  outcome: 'success' | 'failure' | 'info';
  /** Label → value (organization, project, workload, server, deployment id…), in order. */
  fields: Array<[label: string, value: string]>;
  /** An absolute URL to look further, when the platform knows its public address. */
  link?: string;
  occurredAt: Date;
}

/** A channel as a sender needs it: its kind, its settings (`config`) and its opened secrets. */
export interface ChannelTarget {
  notificationId: string;
  kind: NotificationKind;
  config: Record<string, unknown>;
  secrets: Record<string, unknown>;
}

/** Why a delivery failed, and whether trying again later may succeed. */
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    message: string,
    /** false: no retry changes it (refused credentials, a malformed address). */
    readonly retryable: boolean,
    readonly details: {
      /** The channel setting at fault (`botToken`, `webhookUrl`…), when the service says which. */
      field?: string;
      /** How long the service asked to wait before the next attempt (a 429's retry-after). */
      retryAfterMs?: number;
    } = {},
  ) {
    super(message);
  }
}

/**
 * Sends one message to one channel in its service's wire format. `idempotencyKey` is the
 * same for every attempt of one event on one channel (sent where the service takes one, e.g.
 * an `Idempotency-Key` header on webhooks). Resolves once the service accepted it; throws a
 * DeliveryError (its message never holds a secret) otherwise.
 */
export type ChannelSender = (target: ChannelTarget, message: EventMessage, options: { idempotencyKey: string; signal?: AbortSignal }) => Promise<void>;
