import type { Kysely } from 'kysely';

/**
 * Scheduled backups (issue 18, section 3): the cron tick a backup last ran for. A scheduler
 * claims a tick by moving this forward in one conditional UPDATE, so with several control
 * planes each tick runs once.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('backups').addColumn('last_scheduled_at', 'timestamptz').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('backups').dropColumn('last_scheduled_at').execute();
}
