import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Loads a platform backup's SQL dump into a new embedded database in `dir` (`<SKIFF_DATA_DIR>/db`),
 * before the control plane first starts there. Refuses a folder that holds a database already:
 * a restore never mixes into existing records. PGlite loads here, not with the module: a
 * control plane on PostgreSQL never holds it.
 */
export async function restorePgliteDir(dir: string, dump: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) throw new Error(`${dir} holds a database already: restore into an empty folder`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dir);
  try {
    await db.exec(dump);
  } finally {
    await db.close();
  }
}
