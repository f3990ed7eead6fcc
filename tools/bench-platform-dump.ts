/**
 * `tools/bench backup`'s platform step: the memory the embedded database's dump takes (issue 18),
 * in this process, as the control plane runs it (PGlite in its worker thread). A PGlite database
 * in a temporary folder is filled with BENCH_BACKUP_PLATFORM_MB of rows of 1 KiB of text, then
 * dumped twice through gzip into a counting sink: as the platform backup does now (the schema from
 * pg_dump, the rows in pieces, pglite-dump.ts) and as PGlite's pg_dump alone does (the whole dump
 * in its in-memory file, how it ran before). The process's RSS is sampled every 100 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { PgliteThread, PgliteThreadDialect } from '../libs/db/src/pglite-thread.js';

const MB = 1024 * 1024;

export interface DumpFigure {
  what: string;
  idle: number;
  peak: number;
  gzipped: number;
  seconds: number;
  /** The main thread's V8 heap at its peak (the worker's and PGlite's WebAssembly memory are in the RSS only). */
  heapPeak: number;
}

const rss = () => process.memoryUsage().rss / MB;

async function measured(what: string, pieces: () => AsyncIterable<Uint8Array>): Promise<DumpFigure> {
  global.gc?.();
  const idle = rss();
  let peak = idle;
  let heapPeak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rss());
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed / MB);
  }, 100);
  let gzipped = 0;
  const started = Date.now();
  try {
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => ((gzipped += chunk.length), done()) });
    await pipeline(Readable.from(pieces()), createGzip(), sink);
  } finally {
    clearInterval(timer);
  }
  return { what, idle, peak: Math.max(peak, rss()), gzipped, seconds: (Date.now() - started) / 1000, heapPeak };
}

export async function platformDump(sizeMb: number, log: (text: string) => void): Promise<{ data: number; figures: DumpFigure[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'skiff-bench-platform-'));
  /** Each step on the database opened anew: the memory the fill took is not the dump's. */
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
    log(`database ${(data / MB).toFixed(0)} MB: dumping`);
    const figures = [await opened((_t, dialect) => measured('in pieces (now)', () => dialect.dump()))];
    figures.push(await opened((thread) => measured('PGlite pg_dump whole (before)', async function* () { yield await thread.pgDump([]); })));
    return { data, figures };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
