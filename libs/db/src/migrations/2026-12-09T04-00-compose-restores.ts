import type { Kysely } from 'kysely';

/**
 * Restores of compose backups (issue 18, section 4): a `database_restores` row goes into a
 * database service or into a compose stack's service (`compose_id`, `service_name`), so the
 * database service becomes optional.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('database_restores').alterColumn('database_service_id', (c) => c.dropNotNull()).execute();
  await db.schema
    .alterTable('database_restores')
    .addColumn('compose_id', 'text', (c) => c.references('compose_stacks.id').onDelete('cascade'))
    .addColumn('service_name', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('database_restores').where('database_service_id', 'is', null).execute();
  await db.schema.alterTable('database_restores').dropColumn('compose_id').dropColumn('service_name').execute();
  await db.schema.alterTable('database_restores').alterColumn('database_service_id', (c) => c.setNotNull()).execute();
}
