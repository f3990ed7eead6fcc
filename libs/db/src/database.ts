import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, type Dialect } from 'kysely';
import pg from 'pg';
import { migrations } from './migrations/index.js';
import { PgliteThread, PgliteThreadDialect } from './pglite-thread.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseConfig {
  /** A Postgres connection string; without it an embedded PGlite database is used. */
  url?: string;
  /** Where PGlite keeps its files; `memory://` for a throw-away database. */
  pgliteDir?: string;
  /** Connection pool size for Postgres. */
  poolSize?: number;
  /** Told when an idle Postgres connection breaks (the pool replaces it; nothing fails). */
  onIdleConnectionError?: (err: Error) => void;
  /** Told the text of every statement run (tests count them). */
  onQuery?: (sql: string) => void;
}

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** On PGlite: the database as plain SQL in pieces, read as the caller goes (pglite-thread.ts, pglite-dump.ts). */
  dumpSql?: () => AsyncIterable<Uint8Array>;
  close(): Promise<void>;
}

/**
 * Postgres settings for PGlite. It touches all of shared_buffers in its WebAssembly memory, and
 * Postgres's default (128MB) was most of an idle control plane; the OS caches the data files anyway.
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  let dialect: Dialect;
  let kind: DatabaseHandle['kind'];
  let endThread = async () => {};
  let dumpSql: DatabaseHandle['dumpSql'];
  if (config.url) {
    kind = 'postgres';
    const pool = new pg.Pool({ connectionString: config.url, max: config.poolSize ?? 10 });
    // An idle connection that breaks (the server restarted, or dropped it) is an 'error' event
    // of the pool, which would end the process without a listener: the pool discards that
    // connection and the next query opens another.
    pool.on('error', (err) => config.onIdleConnectionError?.(err));
    dialect = new PostgresDialect({ pool });
  } else {
    kind = 'pglite';
    const dir = config.pgliteDir ?? 'memory://';
    if (!dir.startsWith('memory://')) await createPgliteDir(dir);
    const thread = await PgliteThread.start(dir, PGLITE_SETTINGS);
    const pglite = new PgliteThreadDialect(thread);
    dialect = pglite;
    dumpSql = pglite.dump;
    // Kysely ends the driver only if it ran a query: the thread is ended here in any case.
    endThread = () => thread.close();
  }
  const onQuery = config.onQuery;
  const db = new Kysely<Database>({
    dialect,
    plugins: [new CamelCasePlugin({ underscoreBetweenUppercaseLetters: true })],
    ...(onQuery ? { log: (event) => onQuery(event.query.sql) } : {}),
  });
  return {
    db,
    kind,
    ...(dumpSql ? { dumpSql } : {}),
    close: async () => {
      await db.destroy();
      await endThread();
    },
  };
}

/**
 * Creates the PGlite database in `dir`, when there is none yet, in a short-lived node process:
 * PGlite runs initdb in throw-away WebAssembly instances (about 500 MB) that would otherwise stay
 * resident here until a full garbage collection, which an idle server does not reach.
 */
async function createPgliteDir(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  const pglite = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = 'require(process.argv[1]).PGlite.create(process.argv[2]).then((db) => db.close())';
  await promisify(execFile)(process.execPath, ['-e', script, pglite, dir]);
}

export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'skiff_migrations',
    migrationLockTableName: 'skiff_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}
