import type { Kysely } from 'kysely';

/**
 * The revision of each server's proxy configuration: raised in the transaction of every
 * change that alters it, and carried by that change's ApplyProxyConfig command, so the agent
 * can skip a configuration older than the one it applied. Keyed by the wire server id
 * (`local` for the platform host, which has no servers row).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('proxy_revisions')
    .addColumn('server_id', 'text', (c) => c.primaryKey())
    .addColumn('revision', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('proxy_revisions').execute();
}
