import { type Kysely, sql } from 'kysely';

/**
 * Deployments of compose stacks: a deployment belongs to exactly one workload, an application
 * or a compose stack (removed with it).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deployments').alterColumn('application_id', (c) => c.dropNotNull()).execute();
  await db.schema
    .alterTable('deployments')
    .addColumn('compose_id', 'text', (c) => c.references('compose_stacks.id').onDelete('cascade'))
    .execute();
  await sql`alter table deployments add constraint deployments_one_workload check (num_nonnulls(application_id, compose_id) = 1)`.execute(db);
  await db.schema.createIndex('deployments_compose').on('deployments').columns(['compose_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deployments_compose').execute();
  await sql`alter table deployments drop constraint deployments_one_workload`.execute(db);
  await db.deleteFrom('deployments').where('compose_id', 'is not', null).execute();
  await db.schema.alterTable('deployments').dropColumn('compose_id').execute();
  await db.schema.alterTable('deployments').alterColumn('application_id', (c) => c.setNotNull()).execute();
}
