import { type Kysely, sql } from 'kysely';

/**
 * What a server's agent brings to its record: the credential it authenticates with (a
 * SHA-256 digest; the credential itself is never stored), the one-time join token that
 * makes it (digest and expiry), and what the agent said about itself when it registered and
 * when it was last heard from.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('servers')
    .addColumn('credential_hash', 'text')
    .addColumn('join_token_hash', 'text')
    .addColumn('join_token_expires_at', 'timestamptz')
    .addColumn('joined_at', 'timestamptz')
    .addColumn('last_seen_at', 'timestamptz')
    .addColumn('agent_version', 'text')
    .addColumn('docker_version', 'text')
    .addColumn('hostname', 'text')
    .execute();
  await sql`create unique index servers_credential_hash on servers (credential_hash) where credential_hash is not null`.execute(db);
  await sql`create unique index servers_join_token_hash on servers (join_token_hash) where join_token_hash is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('servers_join_token_hash').execute();
  await db.schema.dropIndex('servers_credential_hash').execute();
  await db.schema
    .alterTable('servers')
    .dropColumn('credential_hash')
    .dropColumn('join_token_hash')
    .dropColumn('join_token_expires_at')
    .dropColumn('joined_at')
    .dropColumn('last_seen_at')
    .dropColumn('agent_version')
    .dropColumn('docker_version')
    .dropColumn('hostname')
    .execute();
}
