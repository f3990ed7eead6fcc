import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PGliteInterface } from '@electric-sql/pglite';
import { PGLITE_SETTINGS } from './database.js';
import { type Statement, sqlStatements } from './sql-statements.js';

export interface RestoreLimits {
  /** The SQL one exec carries at most (a statement larger than that goes alone). */
  batchChars: number;
  /** Told after each batch: the statements and characters of SQL run so far. */
  progress?: (done: { statements: number; chars: number }) => void;
}

/** A dump's text, as UTF-8 bytes or strings in pieces of any size. */
export type DumpText = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string>;

export const RESTORE_LIMITS: RestoreLimits = { batchChars: 4 << 20 };

/**
 * Loads a platform backup's SQL dump into a new embedded database in `dir` (`<SKIFF_DATA_DIR>/db`),
 * before the control plane first starts there, as the dump's bytes arrive: they are cut into
 * statements (sql-statements.ts) and executed a batch of up to `batchChars` at a time, so the
 * memory it takes is a batch's (or the dump's largest statement's), whatever the dump's size.
 * All or nothing: the statements run in one transaction, and when one fails (or the dump is
 * cut short, or not UTF-8) what the restore made in `dir` is removed, so the folder takes the
 * next attempt. Refuses a folder that holds a database already: a restore never mixes into
 * existing records. PGlite loads here, not with the module: a control plane on PostgreSQL
 * never holds it.
 */
export async function restorePgliteDir(dir: string, dump: string | DumpText, limits: RestoreLimits = RESTORE_LIMITS): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) throw new Error(`${dir} holds a database already: restore into an empty folder`);
  const found = existsSync(dir) ? new Set(readdirSync(dir)) : undefined;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    await load(dir, typeof dump === 'string' ? [dump] : dump, limits);
  } catch (err) {
    if (!found) rmSync(dir, { recursive: true, force: true });
    else for (const name of readdirSync(dir)) if (!found.has(name)) rmSync(join(dir, name), { recursive: true, force: true });
    throw err;
  }
}

async function load(dir: string, dump: DumpText, limits: RestoreLimits): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dir, { startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS] });
  try {
    await db.exec('BEGIN');
    let batch: Statement[] = [];
    let chars = 0;
    let total = 0;
    const run = async () => {
      if (batch.length === 0) return;
      // A savepoint per batch: when it fails, its statements run again one at a time to name the one that fails.
      await db.exec('SAVEPOINT skiff_batch');
      try {
        await db.exec(batch.map((s) => s.sql).join('\n'));
      } catch (err) {
        throw new Error(await failure(db, batch, err));
      }
      await db.exec('RELEASE SAVEPOINT skiff_batch');
      total += chars;
      limits.progress?.({ statements: batch.at(-1)!.ordinal, chars: total });
      batch = [];
      chars = 0;
    };
    for await (const statement of sqlStatements(text(dump))) {
      if (chars > 0 && chars + statement.sql.length > limits.batchChars) await run();
      batch.push(statement);
      chars += statement.sql.length + 1;
    }
    await run();
    await db.exec('COMMIT');
  } finally {
    await db.close();
  }
}

async function* text(dump: DumpText): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const piece of dump) yield typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    yield decoder.decode();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') throw new Error('the dump is not UTF-8 text: is it still gzipped or encrypted?');
    throw err;
  }
}

/** Which statement of a batch that failed fails, shown up to its first literal (never a value). */
async function failure(db: PGliteInterface, batch: Statement[], batchError: unknown): Promise<string> {
  let failed: Statement | undefined;
  let error = batchError;
  await db.exec('ROLLBACK TO SAVEPOINT skiff_batch');
  for (const s of batch) {
    try {
      await db.exec(s.sql);
    } catch (err) {
      failed = s;
      error = err;
      break;
    }
  }
  const message = error instanceof Error ? error.message : String(error);
  if (!failed) return `statements ${batch[0]!.ordinal} to ${batch.at(-1)!.ordinal} of the dump failed together: ${message}`;
  const head = failed.sql.split("'")[0]!.replace(/\s+/g, ' ').slice(0, 100);
  return `statement ${failed.ordinal} of the dump (${head}…) failed: ${message}`;
}
