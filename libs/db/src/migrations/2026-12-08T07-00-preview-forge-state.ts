import type { Kysely } from 'kysely';

/**
 * Previews' forge bookkeeping (issue 19, third pass): the state last posted to the forge
 * (`pending` until the deployment's end is told, so a restart can tell it), the repository the
 * pull request belongs to (`owner/name`, to address the forge again), and a fork's clone address.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('preview_deployments')
    .addColumn('forge_state', 'text')
    .addColumn('forge_repository', 'text')
    .addColumn('fork_clone_url', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('preview_deployments').dropColumn('forge_state').dropColumn('forge_repository').dropColumn('fork_clone_url').execute();
}
