import { type Kysely, sql } from 'kysely';

/**
 * Event retention: events older than SKIFF_EVENT_RETENTION_DAYS are deleted with their
 * deliveries. `event_prune_marks` keeps, per organization, the newest event id deleted, so a
 * stream resumed from an older Last-Event-ID can say that events were removed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_occurred_at').on('events').columns(['occurred_at', 'id']).execute();
  await db.schema
    .createTable('event_prune_marks')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('pruned_through', 'bigint', (c) => c.notNull())
    .addColumn('pruned_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_prune_marks').execute();
  await db.schema.dropIndex('events_occurred_at').execute();
}
