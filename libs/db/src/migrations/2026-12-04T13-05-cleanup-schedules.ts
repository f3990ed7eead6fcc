import { type Kysely, sql } from 'kysely';

/**
 * The daily container cleanup, per server (settings.updateContainerCleanup): whether it is
 * on, and when it last ran. `server_id` is the agent channel's id: a server record's id, or
 * `local` for the platform host (no foreign key: the platform host has no server record).
 * A scheduler claims a due run by moving `last_run_at` in one UPDATE, so two control planes
 * never run the same server's cleanup twice.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('cleanup_schedules')
    .addColumn('server_id', 'text', (c) => c.primaryKey())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('last_run_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into cleanup_schedules (server_id, enabled)
    select 'local', enable_container_cleanup from platform_settings where id = 'platform'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('cleanup_schedules').execute();
}
