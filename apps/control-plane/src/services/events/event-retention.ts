import type { Db } from '@skiff/db';
import { sql } from 'kysely';

export const DEFAULT_EVENT_RETENTION_DAYS = 30;

/**
 * Deletes, in batches of `batchSize` (each its own short transaction), the events that
 * occurred before `before` and have no delivery still pending, with their deliveries
 * (delivered or failed; the foreign key cascades). Each batch raises its organizations'
 * prune marks to the newest id it deleted. Stops between batches once `stopped()` says so.
 */
export async function pruneEvents(db: Db, before: Date, options: { batchSize?: number; stopped?: () => boolean } = {}): Promise<number> {
  const batchSize = options.batchSize ?? 1000;
  let deleted = 0;
  for (;;) {
    const batch = await db.transaction().execute(async (tx) => {
      const rows = await sql<{ id: string; organizationId: string }>`
        delete from events where id in (
          select e.id from events e
          where e.occurred_at < ${before}
            and not exists (select 1 from event_deliveries d where d.event_id = e.id and d.status = 'pending')
          order by e.occurred_at, e.id
          limit ${batchSize}
          for update skip locked
        )
        returning id, organization_id as "organizationId"
      `.execute(tx);
      const newest = new Map<string, bigint>();
      for (const r of rows.rows) {
        const id = BigInt(r.id);
        if ((newest.get(r.organizationId) ?? -1n) < id) newest.set(r.organizationId, id);
      }
      for (const [organizationId, id] of newest) {
        await sql`
          insert into event_prune_marks (organization_id, pruned_through, pruned_at) values (${organizationId}, ${String(id)}::bigint, now())
          on conflict (organization_id) do update
          set pruned_through = greatest(event_prune_marks.pruned_through, excluded.pruned_through), pruned_at = now()
        `.execute(tx);
      }
      return rows.rows.length;
    });
    deleted += batch;
    if (batch < batchSize || options.stopped?.()) return deleted;
    // Lets the event loop (the worker's sends, the API) run between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The newest event id of the organization that retention deleted; null when none was. */
export async function prunedThrough(db: Db, organizationId: string): Promise<string | null> {
  const row = await db.selectFrom('eventPruneMarks').select('prunedThrough').where('organizationId', '=', organizationId).executeTakeFirst();
  return row ? String(row.prunedThrough) : null;
}
