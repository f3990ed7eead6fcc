import { type Kysely, sql } from 'kysely';

/**
 * `database_restores` (issue 18, section 4): each `backup.restore`, kept like a deployment:
 * the file restored (`object_key` of the backup's destination), the database service it went
 * into, the agent's command, its status (`running`, `done`, `error`) and its log.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('database_restores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('backup_id', 'text', (c) => c.notNull().references('backups.id').onDelete('cascade'))
    .addColumn('database_service_id', 'text', (c) => c.notNull().references('database_services.id').onDelete('cascade'))
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('command_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('log', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('database_restores').execute();
}
