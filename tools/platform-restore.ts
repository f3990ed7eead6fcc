/**
 * Brings a platform backup's database dump into the embedded database of a data directory, on a
 * new machine before `tools/up` first starts there:
 *   npx tsx tools/platform-restore.ts <dump> [data dir, default $SKIFF_DATA_DIR or .data]
 * The dump is `<time>.sql`, or the backup's `<time>.sql.gz` or `<time>.sql.gz.age` as fetched
 * (the passphrase is asked for on the terminal, or read from the first line of stdin). It is
 * read, gunzipped, decrypted and loaded as a stream (libs/db/src/pglite-restore.ts).
 */
import { join, resolve } from 'node:path';
import { RESTORE_LIMITS, restorePgliteDir } from '@skiff/db';
import { dumpFileText, readPassphrase } from './lib/platform-dump-file.js';

const [dumpFile, dataDir = process.env.SKIFF_DATA_DIR || '.data'] = process.argv.slice(2);
if (!dumpFile) {
  console.error('usage: npx tsx tools/platform-restore.ts <dump: .sql, .sql.gz or .sql.gz.age> [data dir]');
  process.exit(2);
}
const dir = join(resolve(dataDir), 'db');
let told = Date.now();
const progress = ({ statements, chars }: { statements: number; chars: number }) => {
  if (Date.now() - told < 10_000) return;
  told = Date.now();
  console.error(`${statements} statements loaded (${(chars / 1024 / 1024).toFixed(0)} MB of SQL)`);
};
try {
  await restorePgliteDir(dir, await dumpFileText(dumpFile, readPassphrase), { ...RESTORE_LIMITS, progress });
  console.log(`restored ${dumpFile} into ${dir}`);
} catch (err) {
  console.error(`the restore failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
