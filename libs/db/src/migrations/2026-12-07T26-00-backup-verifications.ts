import { type Kysely, sql } from 'kysely';

/**
 * `backup_verifications` (issue 18, section 4): each `backup.verify` (on demand, or after a
 * successful scheduled run): the file restored in a throw-away container, the agent's
 * command, its status (`running`, `done`, `error`), the tables found with their row counts
 * (`[{name, rows}]`), the error, and whether the scheduler asked for it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('backup_verifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('backup_id', 'text', (c) => c.notNull().references('backups.id').onDelete('cascade'))
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('command_id', 'text', (c) => c.notNull().unique())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tables', 'jsonb')
    .addColumn('error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('backup_verifications_backup_created').on('backup_verifications').columns(['backup_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('backup_verifications').execute();
}
