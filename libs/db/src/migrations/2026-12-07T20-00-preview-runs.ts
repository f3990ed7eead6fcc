import type { Kysely } from 'kysely';

/**
 * Preview deployments that run (issue 19, section 4). A preview's deployments are the parent
 * application's rows marked with `preview_deployment_id` (they go with the preview); the
 * preview keeps the head commit it was last deployed at and the id of the comment on its pull
 * request (edited as the preview moves).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('deployments')
    .addColumn('preview_deployment_id', 'text', (c) => c.references('preview_deployments.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('deployments_preview').on('deployments').column('preview_deployment_id').execute();
  await db.schema.alterTable('preview_deployments').addColumn('head_commit', 'text').execute();
  await db.schema.alterTable('preview_deployments').addColumn('comment_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('preview_deployments').dropColumn('comment_id').execute();
  await db.schema.alterTable('preview_deployments').dropColumn('head_commit').execute();
  await db.schema.dropIndex('deployments_preview').execute();
  await db.schema.alterTable('deployments').dropColumn('preview_deployment_id').execute();
}
