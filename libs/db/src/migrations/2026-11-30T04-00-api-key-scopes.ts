import type { Kysely } from 'kysely';

/**
 * API keys people can hand out: `scope` (read-only, limited to named projects and/or servers;
 * null: the whole of the user's access), `expires_at` (null: never) and `last_used_at`
 * (written at most once a minute per key).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('scope', 'jsonb')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('scope').dropColumn('expires_at').dropColumn('last_used_at').execute();
}
