import type { ColumnType, Generated, Selectable } from 'kysely';
import type { Json } from './columns.js';

export type EventOutcome = 'success' | 'failure' | 'info';

/** One thing that happened in an organization; ids and a summary, never secrets. */
export interface EventsTable {
  /** Monotonic: the event stream's `id:`. Postgres answers bigint as a string. */
  id: ColumnType<string, never, never>;
  organizationId: string;
  /** A notification flag (`appDeploy`, `appBuildError`, …). */
  kind: string;
  outcome: EventOutcome;
  workloadKind: string | null;
  workloadId: string | null;
  workloadName: string | null;
  projectId: string | null;
  environmentId: string | null;
  serverId: string | null;
  summary: Json<Record<string, unknown>>;
  occurredAt: ColumnType<Date, Date | undefined, never>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to one subscribed channel: the delivery queue. */
export interface EventDeliveriesTable {
  id: string;
  eventId: ColumnType<string, string, never>;
  notificationId: string;
  organizationId: string;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  nextAttemptAt: ColumnType<Date, Date | undefined, Date>;
  /** A worker holds the delivery until then; past it, another may claim it (its process died). */
  claimedUntil: Date | null;
  /** Why the last attempt failed; never holds a channel's secrets. */
  lastError: string | null;
  createdAt: ColumnType<Date, Date | undefined, never>;
  deliveredAt: Date | null;
}

/** Per organization, the newest event id deleted by retention (a stream resumed before it missed some). */
export interface EventPruneMarksTable {
  organizationId: string;
  prunedThrough: ColumnType<string, string, string>;
  prunedAt: ColumnType<Date, Date | undefined, Date>;
}

export type EventRecord = Selectable<EventsTable>;
export type EventDelivery = Selectable<EventDeliveriesTable>;
