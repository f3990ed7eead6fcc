import { type Kysely, sql } from 'kysely';

/**
 * What the agent of a removed server does with what runs on the machine (`server.remove`'s
 * `workloads`): `none` (nothing was recorded on it), `remove` or `leaveRunning`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('removed_servers')
    .addColumn('workloads', 'text', (c) => c.notNull().defaultTo('none').check(sql`workloads in ('none', 'remove', 'leaveRunning')`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('removed_servers').dropColumn('workloads').execute();
}
