import { type Kysely, sql } from 'kysely';

/**
 * Invitations and platform administration, made safe against organization admins:
 * - `invitations.invitee_id`: the account an invitation was made for (the user who had the
 *   email when it was made), or null when it was made for a new account. Only that account,
 *   authenticated, accepts it; a token alone only ever creates a new account.
 * - `members.platform_admin`: the memberships through which a platform administrator acts
 *   as one. Set by first boot (and on organizations a platform administrator creates), never
 *   by an invitation, so a platform administrator's key in an organization they were invited
 *   into carries no platform power.
 * Pending invitations made before this stay unbound: they can only create a new account
 * (an existing account needs a new invitation), since who held the email then is unknown.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('invitations')
    .addColumn('invitee_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
    .execute();
  await db.schema
    .alterTable('members')
    .addColumn('platform_admin', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`update members set platform_admin = true
    where role = 'owner' and user_id in (select id from users where is_platform_admin)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('members').dropColumn('platform_admin').execute();
  await db.schema.alterTable('invitations').dropColumn('invitee_id').execute();
}
