import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, type Dialect } from 'kysely';
import pg from 'pg';
import { type ListenHandlers, type ListenOptions, type NotificationListener, listenFor } from './listener.js';
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

/**
 * A compiled statement run with its parameters; its rows as Kysely answers them (camelCase keys).
 * With a `name`, a prepared statement: PostgreSQL parses and plans it once a connection rather
 * than every run (a name is for one text only, and a statement whose text is made per call would
 * leave a statement per text on every connection). Its answer's columns are fixed when prepared,
 * so it must name them: PostgreSQL refuses to run it once a column added to a table changes what
 * a `*` means ("cached plan must not change result type"). A column whose type a migration
 * changes does the same: the statement is then prepared again under another name.
 */
/** PostgreSQL's `feature_not_supported`, which "cached plan must not change result type" is. */
const CACHED_PLAN_CHANGED = '0A000';

export type DirectQuery = (sql: string, parameters: readonly unknown[], name?: string) => Promise<Record<string, unknown>[]>;

/** The CamelCasePlugin, with its own row mapping reachable for rows read past Kysely. */
class CamelCase extends CamelCasePlugin {
  rowOf(row: Record<string, unknown>): Record<string, unknown> {
    return this.mapRow(row);
  }
}

const directQueries = new WeakMap<Kysely<any>, DirectQuery>();

/**
 * The database's own query for a database `openDatabase` opened: a compiled statement run with
 * no Kysely executor, connection provider or result plugins in between (several promise hops a
 * statement), its rows mapped as the camel-case plugin maps them. On PostgreSQL the pool's; on
 * PGlite the database thread's, after the open transaction's end. None for a transaction or any
 * other Kysely made from the handle's (a statement must run on the transaction's connection):
 * run those through `executeQuery`.
 */
export function directQueryOf(db: Kysely<any>): DirectQuery | undefined {
  return directQueries.get(db);
}

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  /** On PGlite: the database as plain SQL in pieces, read as the caller goes (pglite-thread.ts, pglite-dump.ts). */
  dumpSql?: () => AsyncIterable<Uint8Array>;
  /** On PostgreSQL: `LISTEN` on a connection of its own, reconnecting (listener.ts). PGlite has one process: none. */
  listen?: (channel: string, handlers: ListenHandlers, options?: ListenOptions) => NotificationListener;
  close(): Promise<void>;
}

/**
 * Postgres settings for PGlite. It touches all of shared_buffers in its WebAssembly memory, and
 * Postgres's default (128MB) was most of an idle control plane; the OS caches the data files anyway.
 */
export const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  let dialect: Dialect;
  let kind: DatabaseHandle['kind'];
  let endThread = async () => {};
  let dumpSql: DatabaseHandle['dumpSql'];
  let pool: pg.Pool | undefined;
  let direct: (sql: string, parameters: readonly unknown[], name?: string) => Promise<{ rows: unknown[] }>;
  if (config.url) {
    kind = 'postgres';
    pool = new pg.Pool({ connectionString: config.url, max: config.poolSize ?? 10 });
    // An idle connection that breaks (the server restarted, or dropped it) is an 'error' event
    // of the pool, which would end the process without a listener: the pool discards that
    // connection and the next query opens another.
    pool.on('error', (err) => config.onIdleConnectionError?.(err));
    dialect = new PostgresDialect({ pool });
    const onPool = pool;
    const renamed = new Map<string, string>();
    direct = async (sql, parameters, name) => {
      if (!name) return onPool.query(sql, parameters as unknown[]);
      try {
        return await onPool.query({ name: renamed.get(name) ?? name, text: sql, values: parameters as unknown[] });
      } catch (err) {
        if ((err as { code?: string }).code !== CACHED_PLAN_CHANGED) throw err;
        // A migration (another control plane's, in a rolling upgrade) changed a column's type
        // under the connections' prepared statement: prepared again, under a name of its own.
        const next = `${name}_${randomBytes(4).toString('hex')}`;
        renamed.set(name, next);
        return onPool.query({ name: next, text: sql, values: parameters as unknown[] });
      }
    };
  } else {
    kind = 'pglite';
    const dir = config.pgliteDir ?? 'memory://';
    if (!dir.startsWith('memory://')) await createPgliteDir(dir);
    const thread = await PgliteThread.start(dir, PGLITE_SETTINGS);
    const pglite = new PgliteThreadDialect(thread);
    dialect = pglite;
    dumpSql = pglite.dump;
    // Every statement with parameters is prepared there by its text (pglite-statements.ts): names are not needed.
    direct = (sql, parameters) => pglite.query(sql, parameters);
    // Kysely ends the driver only if it ran a query: the thread is ended here in any case.
    endThread = () => thread.close();
  }
  const onQuery = config.onQuery;
  const camelCase = new CamelCase({ underscoreBetweenUppercaseLetters: true });
  const db = new Kysely<Database>({
    dialect,
    plugins: [camelCase],
    ...(onQuery ? { log: (event) => onQuery(event.query.sql) } : {}),
  });
  directQueries.set(db, async (sql, parameters, name) => {
    onQuery?.(sql);
    const { rows } = await direct(sql, parameters, name);
    return (rows as Record<string, unknown>[]).map((row) => camelCase.rowOf(row));
  });
  return {
    db,
    kind,
    ...(dumpSql ? { dumpSql } : {}),
    ...(config.url ? { listen: listenFor.bind(null, config.url) } : {}),
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
