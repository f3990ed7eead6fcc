import type { Kysely } from 'kysely';

/**
 * The commit a deployment builds (issue 19, second pass): a preview's is its pull request's
 * head commit, given to the agent to check out after the clone; null: the branch's head.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deployments').addColumn('commit', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deployments').dropColumn('commit').execute();
}
