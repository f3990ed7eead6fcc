import { type Kysely, sql } from 'kysely';

/**
 * Volume backups (issue 18, sections 3–4): `volume_backups`, the schedule of one named
 * volume of an application (as `backups` is of a database), and `volume_restores`, each
 * `volumeBackup.restore` with its command, status and log. Both kinds of backup keep when
 * they last succeeded and when a lapse was last alerted (`last_success_at`,
 * `stale_alerted_at`): a stale-backup event is sent once per lapse. A destination may hold a
 * passphrase (sealed) its archives are encrypted with (age).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('volume_backups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
    .addColumn('volume_name', 'text', (c) => c.notNull())
    .addColumn('destination_id', 'text', (c) => c.notNull().references('destinations.id'))
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('keep_latest_count', 'integer')
    .addColumn('last_scheduled_at', 'timestamptz')
    .addColumn('last_success_at', 'timestamptz')
    .addColumn('stale_alerted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('volume_restores')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('volume_backup_id', 'text', (c) => c.notNull().references('volume_backups.id').onDelete('cascade'))
    .addColumn('volume_name', 'text', (c) => c.notNull())
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('command_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('log', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema.alterTable('backups').addColumn('last_success_at', 'timestamptz').execute();
  await db.schema.alterTable('backups').addColumn('stale_alerted_at', 'timestamptz').execute();
  await db.schema.alterTable('destinations').addColumn('encryption_passphrase', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('destinations').dropColumn('encryption_passphrase').execute();
  await db.schema.alterTable('backups').dropColumn('stale_alerted_at').execute();
  await db.schema.alterTable('backups').dropColumn('last_success_at').execute();
  await db.schema.dropTable('volume_restores').execute();
  await db.schema.dropTable('volume_backups').execute();
}
