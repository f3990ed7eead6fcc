import type { Db, EventOutcome } from '@skiff/db';
import { sql } from 'kysely';
import type { EventKind } from '../notifications/channels/channel-sender.js';

/** What happened, as `recordEvent` takes it. `summary` carries ids and short texts, never a secret. */
export interface NewEvent {
  organizationId: string;
  kind: EventKind;
  outcome: EventOutcome;
  workload?: { kind: string; id: string; name: string };
  projectId?: string | null;
  environmentId?: string | null;
  serverId?: string | null;
  summary: Record<string, unknown>;
  occurredAt?: Date;
}

/**
 * Writes an event and queues one delivery per channel of its organization whose flag selects
 * its kind. Call it inside the transaction of the change it reports, so both commit or
 * neither does; then wake the readers (`EventSignal.notify`) once it committed. Backups and
 * cleanups (no runner yet) call it the same way with `databaseBackup`, `volumeBackup`,
 * `platformBackup` or `containerCleanup`.
 */
export async function recordEvent(tx: Db, event: NewEvent): Promise<string> {
  const row = await tx
    .insertInto('events')
    .values({
      organizationId: event.organizationId,
      kind: event.kind,
      outcome: event.outcome,
      workloadKind: event.workload?.kind ?? null,
      workloadId: event.workload?.id ?? null,
      workloadName: event.workload?.name ?? null,
      projectId: event.projectId ?? null,
      environmentId: event.environmentId ?? null,
      serverId: event.serverId ?? null,
      summary: JSON.stringify(event.summary),
      occurredAt: event.occurredAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const eventId = String(row.id);
  await sql`
    insert into event_deliveries (id, event_id, notification_id, organization_id)
    select 'dlv_' || replace(gen_random_uuid()::text, '-', ''), ${eventId}::bigint, n.id, n.organization_id
    from notifications n
    where n.organization_id = ${event.organizationId} and (n.flags ->> ${event.kind}) = 'true'
  `.execute(tx);
  return eventId;
}

/** Wakes whoever reads events (the delivery worker, open event streams) after a commit that recorded some. */
export class EventSignal {
  private readonly listeners = new Set<() => void>();

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    for (const listener of this.listeners) listener();
  }
}
