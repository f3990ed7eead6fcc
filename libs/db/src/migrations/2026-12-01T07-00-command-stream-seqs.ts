import { type Kysely, sql } from 'kysely';

/**
 * Work an offline agent never received is settled in Postgres (issue 14): each command keeps
 * the JetStream sequence of every copy the relay published (re-publishes store new copies),
 * so the control plane can delete them from the stream and check its agent's consumer never
 * delivered one; `never_received` marks a command the control plane ended before its agent
 * could have it (rows from before this migration count as received: the safe side).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('commands')
    .addColumn('stream_seqs', sql`bigint[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('never_received', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('commands').dropColumn('never_received').dropColumn('stream_seqs').execute();
}
