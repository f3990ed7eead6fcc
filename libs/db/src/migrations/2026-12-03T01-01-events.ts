import { type Kysely, sql } from 'kysely';

/**
 * Events (issue 16): `events`, one row per thing that happened (a deployment ended, the
 * platform restarted, a threshold was crossed…), written in the transaction of the change;
 * its id orders the event stream. `event_deliveries`, one row per event and subscribed
 * channel: the durable queue the delivery worker drains (claimed with a lease).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('workload_kind', 'text')
    .addColumn('workload_id', 'text')
    .addColumn('workload_name', 'text')
    .addColumn('project_id', 'text')
    .addColumn('environment_id', 'text')
    .addColumn('server_id', 'text')
    .addColumn('summary', 'jsonb', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('events_organization_id').on('events').columns(['organization_id', 'id']).execute();
  await db.schema
    .createTable('event_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'bigint', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('notification_id', 'text', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('delivered_at', 'timestamptz')
    .addUniqueConstraint('event_deliveries_event_notification', ['event_id', 'notification_id'])
    .execute();
  await db.schema.createIndex('event_deliveries_due').on('event_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('event_deliveries_organization').on('event_deliveries').columns(['organization_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_deliveries').execute();
  await db.schema.dropTable('events').execute();
}
