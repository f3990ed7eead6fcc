/**
 * `tools/bench platform-restore`: the memory `tools/platform-restore.ts` takes to load an
 * embedded platform backup's dump (issue 18), beside the dump's size. A PGlite database in a
 * temporary folder is filled with BENCH_RESTORE_SIZES (MB, comma-separated; 32,150) of rows of
 * 1 KiB of text, dumped as the platform backup does (pieces, gzip: `<time>.sql.gz`), then
 * restored in a process of its own, as the README says, by:
 *   - the `.sql.gz` as fetched, as the tool reads it (streamed, now; platform-dump-file.ts and
 *     restorePgliteDir);
 *   - the dump gunzipped, read whole and given to one PGlite exec, how the tool ran before
 *     (for sizes up to BENCH_RESTORE_WHOLE_MB, 150: its memory grows with the dump).
 * Each runs in a process of its own: its peak RSS (VmHWM, from /proc), which creating the new
 * cluster sets (~1.1 GB for a moment on the development machine, whatever the dump), and, for
 * the streamed restore, its RSS sampled every 100 ms in the process while the statements load:
 * after the first batch (the cluster open, the schema loaded) and at its highest after it.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import { readAhead } from '../apps/control-plane/src/services/backups/read-ahead.js';
import { PgliteThread, PgliteThreadDialect } from '../libs/db/src/pglite-thread.js';
import { RESTORE_LIMITS, restorePgliteDir } from '../libs/db/src/pglite-restore.js';
import { dumpFileText } from './lib/platform-dump-file.js';
import { statusMb } from './lib/process-memory.js';

const MB = 1024 * 1024;
const SIZES = (process.env.BENCH_RESTORE_SIZES ?? '32,150').split(',').map(Number);
if (SIZES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('BENCH_RESTORE_SIZES must be whole numbers of MB');
const WHOLE_MB = Number(process.env.BENCH_RESTORE_WHOLE_MB ?? 150);
const log = (text: string) => console.error(`[bench-platform-restore] ${text}`);

/** A database of `sizeMb` of rows, dumped as the platform backup writes it. */
async function dumpOf(work: string, sizeMb: number): Promise<string> {
  const dir = await mkdtemp(join(work, 'source-'));
  const thread = await PgliteThread.start(dir, ['-c', 'shared_buffers=16MB']);
  try {
    await thread.query('create table bench (id bigserial primary key, body text)', []);
    for (let done = 0; done < sizeMb; done += 16) {
      const mb = Math.min(16, sizeMb - done);
      await thread.query(`insert into bench (body) select string_agg(md5(random()::text), '') from generate_series(1, ${mb} * 1024 * 32) i group by i / 32`, []);
    }
    const file = join(work, `dump-${sizeMb}.sql.gz`);
    await pipeline(readAhead(new PgliteThreadDialect(thread).dump()).output, createWriteStream(file));
    return file;
  } finally {
    await thread.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Figure {
  peak: number;
  seconds: number;
  /** The streamed restore's RSS after its first batch, and its highest after that (MB). */
  loading?: { first: number; highest: number };
}

/** Runs a restore process to its end: its peak RSS, sampled. */
async function measured(args: string[]): Promise<Figure> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let peak = 0;
  const sample = () =>
    statusMb(child.pid!, 'VmHWM')
      .then((mb) => (peak = Math.max(peak, mb)))
      .catch(() => undefined);
  const timer = setInterval(sample, 100);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(timer);
  if (code !== 0) throw new Error(`${args.join(' ')} exited with ${code}: ${stderr.slice(-2000)}`);
  return { peak, seconds: (Date.now() - started) / 1000, ...(stdout.trim() ? { loading: JSON.parse(stdout) as Figure['loading'] } : {}) };
}

const SELF = import.meta.filename;

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'skiff-bench-restore-'));
  const target = (name: string) => join(work, `data-${name}`);
  try {
    log('the floor: the restore of an empty database’s dump');
    const empty = await dumpOf(work, 0);
    const floor = await measured([SELF, 'streamed', empty, join(target('empty'), 'db')]);
    const rows: string[] = [];
    for (const size of SIZES) {
      log(`filling a database with ${size} MB of rows and dumping it`);
      const gz = await dumpOf(work, size);
      const sql = gz.replace(/\.gz$/, '');
      await writeFile(sql, gunzipSync(await readFile(gz)));
      const [gzBytes, sqlBytes] = [(await stat(gz)).size, (await stat(sql)).size];
      log(`restoring ${(sqlBytes / MB).toFixed(0)} MB of SQL, streamed`);
      const streamed = await measured([SELF, 'streamed', gz, join(target(`streamed-${size}`), 'db')]);
      await rm(target(`streamed-${size}`), { recursive: true, force: true });
      let whole: Figure | undefined;
      if (size <= WHOLE_MB) {
        log(`restoring ${(sqlBytes / MB).toFixed(0)} MB of SQL, read whole (before)`);
        whole = await measured([import.meta.filename, 'whole', sql, join(target(`whole-${size}`), 'db')]);
        await rm(target(`whole-${size}`), { recursive: true, force: true });
      }
      await rm(sql);
      const figure = (f: Figure) =>
        `peak RSS ${f.peak.toFixed(0)} MB, ${f.seconds.toFixed(0)} s${f.loading ? `; while loading: ${f.loading.first.toFixed(0)} MB after the first batch, ${f.loading.highest.toFixed(0)} MB at most after it (growth ${(f.loading.highest - f.loading.first).toFixed(0)} MB)` : ''}`;
      rows.push(`dump of ${(sqlBytes / MB).toFixed(0)} MB of SQL (${(gzBytes / MB).toFixed(1)} MB gzipped):`);
      rows.push(`  streamed (now): ${figure(streamed)}`);
      rows.push(`  read whole, one exec (before): ${whole ? figure(whole) : `not run (over BENCH_RESTORE_WHOLE_MB, ${WHOLE_MB})`}`);
    }
    console.log(`\nthe restore of an embedded platform backup (tools/platform-restore.ts), node ${process.version}`);
    console.log(`floor (an empty database's dump, streamed): peak RSS ${floor.peak.toFixed(0)} MB, ${floor.seconds.toFixed(0)} s; while loading: ${floor.loading!.first.toFixed(0)} MB after the first batch, ${floor.loading!.highest.toFixed(0)} MB at most after it`);
    for (const row of rows) console.log(row);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/**
 * The tool's restore (tools/platform-restore.ts), in this process, its RSS sampled:
 * `node --import tsx tools/bench-platform-restore.ts streamed <dump.sql.gz> <db folder>`.
 */
async function streamed(file: string, dir: string) {
  const rss = () => process.memoryUsage().rss / MB;
  let first: number | undefined;
  let highest = 0;
  const timer = setInterval(() => {
    if (first !== undefined) highest = Math.max(highest, rss());
  }, 100);
  await restorePgliteDir(dir, await dumpFileText(file, () => Promise.reject(new Error('not encrypted'))), {
    ...RESTORE_LIMITS,
    progress: () => {
      first ??= rss();
      highest = Math.max(highest, rss());
    },
  });
  clearInterval(timer);
  process.stdout.write(JSON.stringify({ first, highest }));
}

/** How the restore ran before: `node --import tsx tools/bench-platform-restore.ts whole <dump.sql> <db folder>`. */
async function whole(sqlFile: string, dir: string) {
  const { PGlite } = await import('@electric-sql/pglite');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const db = await PGlite.create(dir);
  try {
    await db.exec(await readFile(sqlFile, 'utf8'));
  } finally {
    await db.close();
  }
}

if (process.argv[2] === 'whole') await whole(process.argv[3]!, process.argv[4]!);
else if (process.argv[2] === 'streamed') await streamed(process.argv[3]!, process.argv[4]!);
else await main();
