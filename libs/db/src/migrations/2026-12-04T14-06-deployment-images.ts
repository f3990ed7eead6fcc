import type { Kysely } from 'kysely';

/**
 * The image each application deployment runs (a registry reference, or the tag of the image
 * the agent built, `<appName>:<deploymentId>`): what `deployment.rollback` and the automatic
 * rollback of a crash loop put back. Null for compose stacks and for deployments recorded
 * before it was kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deployments').addColumn('image', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deployments').dropColumn('image').execute();
}
