/**
 * Brings a platform backup's database dump into the embedded database of a data directory, on a
 * new machine before `tools/up` first starts there:
 *   npx tsx tools/platform-restore.ts <dump.sql> [data dir, default $SKIFF_DATA_DIR or .data]
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { restorePgliteDir } from '@skiff/db';

const [dumpFile, dataDir = process.env.SKIFF_DATA_DIR || '.data'] = process.argv.slice(2);
if (!dumpFile) {
  console.error('usage: npx tsx tools/platform-restore.ts <dump.sql> [data dir]');
  process.exit(2);
}
const dir = join(resolve(dataDir), 'db');
try {
  await restorePgliteDir(dir, await readFile(dumpFile, 'utf8'));
  console.log(`restored ${dumpFile} into ${dir}`);
} catch (err) {
  console.error(`the restore failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
