import type { Kysely } from 'kysely';

/**
 * A compose stack's config files (issue 16, `ai.deploy` configFiles and templates'
 * `config.mounts`): sealed JSON `[{filePath, content}]`, written beside the compose file at
 * each deploy, where the file's relative bind mounts find them. Null: none.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('compose_stacks').addColumn('config_files', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('compose_stacks').dropColumn('config_files').execute();
}
