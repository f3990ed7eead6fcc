import { type Kysely, sql } from 'kysely';

/**
 * Deploy counters (issue 13, stores that only grow): an application's and a cache instance's
 * `forceUpdate` was the count of its deployment records (of its deploy commands for a
 * cache); those are now pruned, so the count is kept in a column, filled from what is there.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('applications').addColumn('deploy_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('cache_instances').addColumn('deploy_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update applications a set deploy_count = (select count(*) from deployments d where d.application_id = a.id)`.execute(db);
  await sql`update cache_instances c set deploy_count = (select count(*) from commands m where m.workload_key = 'cache:' || c.id and m.kind = 'COMMAND_KIND_DEPLOY_APPLICATION')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cache_instances').dropColumn('deploy_count').execute();
  await db.schema.alterTable('applications').dropColumn('deploy_count').execute();
}
