import { type Kysely, sql } from 'kysely';

/**
 * Every change of what an API key resolves to (the key itself, its membership, its user's
 * platform flag, its organization) sends a notification on `skiff_access`, from inside the
 * writing transaction: delivered only if it commits, whichever process or session wrote it.
 * Control planes listening drop the principals they cache (services/identity/access-changes.ts).
 * `api_keys.last_used_at`, names and the like are not listed: they change no one's access. One
 * payload for all, so that a transaction changing several tables sends one notification.
 */
const TRIGGERS: Array<[table: string, events: string]> = [
  ['api_keys', 'INSERT OR DELETE OR TRUNCATE OR UPDATE OF key_hash, user_id, organization_id, scope, expires_at'],
  ['members', 'INSERT OR DELETE OR TRUNCATE OR UPDATE OF role, permissions, platform_admin, user_id, organization_id'],
  ['users', 'DELETE OR TRUNCATE OR UPDATE OF is_platform_admin'],
  ['organizations', 'DELETE OR TRUNCATE'],
];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION skiff_access_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('skiff_access', '');
      RETURN NULL;
    END $$`.execute(db);
  for (const [table, events] of TRIGGERS) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_access_changed`)} AFTER ${sql.raw(events)} ON ${sql.table(table)} FOR EACH STATEMENT EXECUTE FUNCTION skiff_access_changed()`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const [table] of TRIGGERS) await sql`DROP TRIGGER ${sql.id(`${table}_access_changed`)} ON ${sql.table(table)}`.execute(db);
  await sql`DROP FUNCTION skiff_access_changed()`.execute(db);
}
