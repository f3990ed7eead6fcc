import { mkdirSync } from 'node:fs';
import { CamelCasePlugin, Kysely, Migrator, PostgresDialect, type Dialect } from 'kysely';
import pg from 'pg';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export type Db = Kysely<Database>;

export interface DatabaseConfig {
  /** A Postgres connection string; without it an embedded PGlite database is used. */
  url?: string;
  /** Where PGlite keeps its files; `memory://` for a throw-away database. */
  pgliteDir?: string;
  /** Connection pool size for Postgres. */
  poolSize?: number;
}

export interface DatabaseHandle {
  db: Db;
  kind: 'postgres' | 'pglite';
  close(): Promise<void>;
}

export async function openDatabase(config: DatabaseConfig): Promise<DatabaseHandle> {
  let dialect: Dialect;
  let kind: DatabaseHandle['kind'];
  if (config.url) {
    kind = 'postgres';
    dialect = new PostgresDialect({
      pool: new pg.Pool({ connectionString: config.url, max: config.poolSize ?? 10 }),
    });
  } else {
    kind = 'pglite';
    const dir = config.pgliteDir ?? 'memory://';
    if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true });
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGliteDialect } = await import('kysely-pglite-dialect');
    dialect = new PGliteDialect(await PGlite.create(dir));
  }
  const db = new Kysely<Database>({ dialect, plugins: [new CamelCasePlugin({ underscoreBetweenUppercaseLetters: true })] });
  return { db, kind, close: () => db.destroy() };
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
