/**
 * `tools/bench backup`'s platform step: the memory the embedded database's dump takes (issue 18)
 * and how long it keeps requests waiting, in this process, as the control plane runs it (PGlite
 * in its worker thread). A PGlite database in a temporary folder is filled with
 * BENCH_BACKUP_PLATFORM_MB of rows of 1 KiB of text (BENCH_BACKUP_PLATFORM_SIZES: several sizes,
 * comma-separated), then dumped through gzip into a sink that takes BENCH_BACKUP_PLATFORM_UPLOAD_MBPS
 * (8) MB of gzip a second, as an upload would, three ways: as the platform backup does now (the
 * schema from pg_dump, the rows in pieces, read ahead of the upload: read-ahead.ts), in pieces read
 * as the upload goes (the previous design), and with PGlite's pg_dump alone (the whole dump in its
 * in-memory file, how it ran before). The database is reopened for each and left to settle first
 * (PGlite's first second after opening takes ~500 MB for a moment, which is not the dump's). The
 * process's RSS is sampled every 100 ms; a trivial query, issued as a request's would be, every
 * 100 ms, says how long requests wait.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { readAhead } from '../apps/control-plane/src/services/backups/read-ahead.js';
import { PgliteThread, PgliteThreadDialect } from '../libs/db/src/pglite-thread.js';

const MB = 1024 * 1024;
const UPLOAD_MBPS = Number(process.env.BENCH_BACKUP_PLATFORM_UPLOAD_MBPS ?? 8);
if (!(UPLOAD_MBPS > 0)) throw new Error('BENCH_BACKUP_PLATFORM_UPLOAD_MBPS must be a number of MB a second');

export interface DumpFigure {
  what: string;
  idle: number;
  peak: number;
  gzipped: number;
  seconds: number;
  /** The longest a trivial query waited during the dump, and all the time such queries waited (ms). */
  longestWait: number;
  waited: number;
}

const rss = () => process.memoryUsage().rss / MB;

/** The RSS once three samples 300 ms apart agree within 1 MB (PGlite has settled after opening). */
async function settled(): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 50; i++) {
    global.gc?.();
    samples.push(rss());
    const last = samples.slice(-3);
    if (last.length === 3 && Math.max(...last) - Math.min(...last) <= 1) break;
    await sleep(300);
  }
  return samples.at(-1)!;
}

/** An upload of UPLOAD_MBPS. */
function slowSink(count: (n: number) => void): Writable {
  return new Writable({
    write(chunk: Buffer, _e, done) {
      count(chunk.length);
      setTimeout(done, (chunk.length / (UPLOAD_MBPS * MB)) * 1000);
    },
  });
}

type Way = (thread: PgliteThread, dialect: PgliteThreadDialect, sink: Writable) => Promise<void>;

const WAYS: [string, Way][] = [
  ['in pieces, read ahead (now)', (_t, dialect, sink) => pipeline(readAhead(dialect.dump()).output, sink)],
  ['in pieces, read as uploaded (previous)', (_t, dialect, sink) => pipeline(Readable.from(dialect.dump()), createGzip(), sink)],
  [
    'PGlite pg_dump whole (before)',
    async (thread, _d, sink) => {
      // As it ran before: the dump taken between statements (pg_dump runs synchronously in the thread), then uploaded.
      const whole = await thread.pgDump([]);
      await pipeline(Readable.from([whole]), createGzip(), sink);
    },
  ],
];

async function measured(what: string, dialect: PgliteThreadDialect, dump: (sink: Writable) => Promise<void>): Promise<DumpFigure> {
  const idle = await settled();
  let peak = idle;
  const timer = setInterval(() => (peak = Math.max(peak, rss())), 100);
  let gzipped = 0;
  let dumping = true;
  let longestWait = 0;
  let waited = 0;
  const connection = await dialect.createDriver().acquireConnection();
  const probe = (async () => {
    while (dumping) {
      const sent = performance.now();
      await connection.executeQuery({ sql: 'select 1', parameters: [] } as never);
      const wait = performance.now() - sent;
      longestWait = Math.max(longestWait, wait);
      waited += wait;
      await sleep(100);
    }
  })();
  const started = Date.now();
  try {
    await dump(slowSink((n) => (gzipped += n)));
  } finally {
    dumping = false;
    clearInterval(timer);
    await probe;
  }
  return { what, idle, peak: Math.max(peak, rss()), gzipped, seconds: (Date.now() - started) / 1000, longestWait, waited };
}

export async function platformDump(sizeMb: number, log: (text: string) => void): Promise<{ data: number; figures: DumpFigure[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-bench-platform-'));
  /** Each step on the database opened anew: the memory the fill or another way took is not the dump's. */
  const opened = async <T>(work: (thread: PgliteThread, dialect: PgliteThreadDialect) => Promise<T>): Promise<T> => {
    const thread = await PgliteThread.start(dir, ['-c', 'shared_buffers=16MB']);
    try {
      return await work(thread, new PgliteThreadDialect(thread));
    } finally {
      await thread.close();
    }
  };
  try {
    log(`filling the embedded database with ${sizeMb} MB of rows`);
    const data = await opened(async (thread) => {
      await thread.query('create table bench (id bigserial primary key, body text)', []);
      for (let done = 0; done < sizeMb; done += 16) {
        await thread.query("insert into bench (body) select string_agg(md5(random()::text), '') from generate_series(1, 16 * 1024 * 32) i group by i / 32", []);
      }
      const { rows } = await thread.query("select pg_total_relation_size('bench') as size", []);
      return Number((rows[0] as { size: string }).size);
    });
    log(`database ${(data / MB).toFixed(0)} MB: dumping, the upload at ${UPLOAD_MBPS} MB/s`);
    const figures: DumpFigure[] = [];
    for (const i of WAYS.keys()) {
      const { stdout } = await promisify(execFile)(process.execPath, [...process.execArgv, import.meta.filename, dir, String(i)], { maxBuffer: MB });
      figures.push(JSON.parse(stdout) as DumpFigure);
    }
    return { data, figures };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** One way measured in this process: `node --import tsx tools/bench-platform-dump.ts <folder> <way>`. */
if (process.argv[1] === import.meta.filename) {
  const [dir, i] = process.argv.slice(2);
  const [what, way] = WAYS[Number(i)]!;
  const thread = await PgliteThread.start(dir!, ['-c', 'shared_buffers=16MB']);
  const dialect = new PgliteThreadDialect(thread);
  const figure = await measured(what, dialect, (sink) => way(thread, dialect, sink));
  await thread.close();
  process.stdout.write(JSON.stringify(figure));
}
