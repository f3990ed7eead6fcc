import { type Kysely, sql } from 'kysely';

/**
 * Removed servers (issue 14): the digest of each removed server's credential, so its agent,
 * still running, is told the server was removed (and stops) rather than that its credential
 * is unknown (which it would retry forever).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('removed_servers')
    .addColumn('credential_hash', 'text', (c) => c.primaryKey())
    .addColumn('server_id', 'text', (c) => c.notNull())
    .addColumn('removed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('removed_servers').execute();
}
