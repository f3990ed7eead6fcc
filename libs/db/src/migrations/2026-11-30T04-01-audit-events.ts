import { type Kysely, sql } from 'kysely';

/**
 * `audit_events`: one row per mutating operation that succeeded or was refused for
 * permission: who (user, API key), what (operation, the ids of its input), when, from where.
 * Never input values. Rows of a removed organization, user or key stay (ids only) until the
 * retention prunes them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('targets', 'jsonb', (c) => c.notNull())
    .addColumn('target_ids', 'jsonb', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_events_organization_at').on('audit_events').columns(['organization_id', 'at', 'id']).execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
  await sql`create index audit_events_target_ids on audit_events using gin (target_ids)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('audit_events').execute();
}
