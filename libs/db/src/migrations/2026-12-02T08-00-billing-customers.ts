import { type Kysely, sql } from 'kysely';

/**
 * Billing with a payment provider (issue 16, section 4): per organization its customer at the
 * provider, its subscription and the server allowance paid for (null: the platform's default,
 * SKIFF_MAX_SERVERS); and the ids of the provider's webhook events already applied, so a
 * replayed delivery changes nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('billing_accounts')
    .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
    .addColumn('customer_id', 'text', (c) => c.unique())
    .addColumn('subscription_id', 'text')
    .addColumn('subscription_status', 'text')
    .addColumn('max_servers', 'integer')
    .addColumn('allowance_event_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('billing_events')
    .addColumn('event_id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('billing_events').execute();
  await db.schema.dropTable('billing_accounts').execute();
}
