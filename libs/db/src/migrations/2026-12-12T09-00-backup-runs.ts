import { type Kysely, sql } from 'kysely';

/**
 * `backup_runs`: one row per run of a database, compose, volume or platform backup, so that a
 * run's outcome no longer lives only in the process that started it. A scheduled firing's row
 * is written in the transaction that claims it, a run handed to an agent names its command
 * (`command_id`, written with the outbox row), and the command's result moves it to `ended`
 * whoever receives it; recording the event (`done`/`error`) is claimed on `status`, so it
 * happens once. `heartbeat_at` is kept fresh by the control plane holding a run that has no
 * command: one left stale names a control plane that stopped during the run.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('backup_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('backup_id', 'text', (c) => c.references('backups.id').onDelete('cascade'))
    .addColumn('volume_backup_id', 'text', (c) => c.references('volume_backups.id').onDelete('cascade'))
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('command_id', 'text', (c) => c.unique())
    .addColumn('object_key', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('succeeded', 'boolean')
    .addColumn('error', 'text')
    .addColumn('size', 'double precision')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .addColumn('heartbeat_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addCheckConstraint('backup_runs_one_target', sql`(backup_id IS NULL) <> (volume_backup_id IS NULL)`)
    .execute();
  await db.schema.createIndex('backup_runs_unfinished').on('backup_runs').column('status').where(sql.ref('status'), 'in', ['running', 'ended']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('backup_runs').execute();
}
