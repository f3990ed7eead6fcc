import type { Db } from '@skiff/db';
import { sql } from 'kysely';

/**
 * Holds a lock named `name` until the transaction `tx` ends (a PostgreSQL advisory lock on the
 * name's hash: two names sharing a hash wait for each other, never pass together). What a check
 * reads after it, in `tx`, stays true until the write of `tx` commits: another transaction taking
 * the same lock waits, and then reads that write. On the embedded PGlite a transaction has the one
 * session alone already; the lock is taken all the same (re-taking it in one session passes).
 */
export async function lockUntilCommit(tx: Db, name: string): Promise<void> {
  if (!tx.isTransaction) throw new Error(`lockUntilCommit(${name}) outside a transaction would end with its statement`);
  await sql`select pg_advisory_xact_lock(hashtext(${name}))`.execute(tx);
}
