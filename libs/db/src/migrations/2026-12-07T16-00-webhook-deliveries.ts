import { type Kysely, sql } from 'kysely';

/**
 * Push-to-deploy (issue 19, section 3). `webhook_deliveries`: every received event and what
 * was decided for one workload (`deployed` with its deployment, `ignored` or `refused` with
 * the reason), kept bounded per workload. `webhook_seen`: the delivery keys (a forge's
 * delivery id, or the body's digest) received within the replay window; a key seen again is
 * a replay.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('application_id', 'text', (c) => c.references('applications.id').onDelete('cascade'))
    .addColumn('compose_id', 'text', (c) => c.references('compose_stacks.id').onDelete('cascade'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('ref', 'text')
    .addColumn('commit', 'text')
    .addColumn('decision', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('deployment_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('webhook_deliveries_application').on('webhook_deliveries').columns(['application_id', 'created_at']).execute();
  await db.schema.createIndex('webhook_deliveries_compose').on('webhook_deliveries').columns(['compose_id', 'created_at']).execute();
  await db.schema
    .createTable('webhook_seen')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('seen_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_seen_at').on('webhook_seen').column('seen_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_seen').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
}
