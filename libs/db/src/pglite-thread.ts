import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { PGliteOptions } from '@electric-sql/pglite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * The worker: one PGlite, answering `{id, sql, params}` messages one at a time (PGlite queues
 * them itself). CommonJS text run with `eval`, so that it needs no file beside a bundle; it
 * loads PGlite from the path the main thread resolved. An error crosses as its message and
 * its text and number fields (`code`, `constraint`, `detail`…), which the services read.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglite);
const opening = PGlite.create(workerData.dir, { startParams: [...PGlite.defaultStartParams, ...workerData.settings] });
const plain = (err) => {
  const out = { message: String(err && err.message || err) };
  for (const [k, v] of Object.entries(err || {})) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  return out;
};
parentPort.on('message', async ({ id, sql, params, close }) => {
  let db;
  try {
    db = await opening;
  } catch (err) {
    parentPort.postMessage({ id, error: plain(err) });
    return;
  }
  // The first message only waits for the database to open.
  if (sql === undefined && !close) {
    parentPort.postMessage({ id, rows: [] });
    return;
  }
  if (close) {
    await db.close();
    parentPort.postMessage({ id, rows: [] });
    parentPort.close();
    return;
  }
  try {
    const result = await db.query(sql, params);
    parentPort.postMessage({ id, rows: result.rows, affectedRows: result.affectedRows });
  } catch (err) {
    parentPort.postMessage({ id, error: plain(err) });
  }
});
`;

interface Answer {
  id: number;
  rows: unknown[];
  affectedRows?: number;
  error?: Record<string, unknown> & { message: string };
}

/** PGlite in a worker thread: its queries no longer hold up the event loop that serves requests. */
export class PgliteThread {
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (err: Error) => void }>();
  private next = 0;
  private exited: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (a: Answer) => {
      const w = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      w?.resolve(a);
    });
    const fail = (err: Error) => {
      this.exited = err;
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the database thread has stopped')));
  }

  /** Opens the database in `dir` (`memory://` for a throw-away one) with these Postgres settings (after PGlite's own). */
  static async start(dir: string, settings: NonNullable<PGliteOptions['startParams']>): Promise<PgliteThread> {
    const pglite = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    const worker = new Worker(WORKER, { eval: true, workerData: { pglite, dir, settings } });
    const thread = new PgliteThread(worker);
    const ready = await thread.send({}).catch((err: Error) => ({ id: -1, rows: [], error: { message: err.message } }));
    if (ready.error) {
      await worker.terminate();
      throw new Error(`PGlite did not open: ${ready.error.message}`);
    }
    return thread;
  }

  async query(sql: string, params: readonly unknown[]): Promise<QueryResult<unknown>> {
    const a = await this.send({ sql, params });
    if (a.error) throw Object.assign(new Error(a.error.message), a.error);
    return { rows: a.rows, ...(a.affectedRows ? { numAffectedRows: BigInt(a.affectedRows) } : {}) };
  }

  /** Closes the database and ends the thread; again: waits for the same end. */
  close(): Promise<void> {
    this.closing ??= this.exited
      ? Promise.resolve()
      : Promise.all([new Promise((resolve) => this.worker.once('exit', resolve)), this.send({ close: true })]).then(() => {});
    return this.closing;
  }

  /** Sends a message; the first, empty one answers once the database is open. */
  private send(message: object): Promise<Answer> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }
}

/** Kysely over a PgliteThread: one connection, lent to one caller at a time (a transaction keeps it). */
export class PgliteThreadDialect implements Dialect {
  constructor(private readonly thread: PgliteThread) {}
  createAdapter = () => new PostgresAdapter();
  createQueryCompiler = () => new PostgresQueryCompiler();
  createIntrospector = (db: Kysely<unknown>) => new PostgresIntrospector(db);
  createDriver = (): Driver => new PgliteThreadDriver(this.thread);
}

class PgliteThreadDriver implements Driver {
  private readonly connection: DatabaseConnection;
  private busy = false;
  private readonly queue: ((c: DatabaseConnection) => void)[] = [];

  constructor(private readonly thread: PgliteThread) {
    this.connection = {
      executeQuery: <R>(q: CompiledQuery) => thread.query(q.sql, q.parameters) as Promise<QueryResult<R>>,
      streamQuery: () => {
        throw new Error('streaming queries are not supported on PGlite');
      },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.busy) {
      this.busy = true;
      return this.connection;
    }
    return new Promise((resolve) => this.queue.push(resolve));
  }

  async releaseConnection(): Promise<void> {
    const next = this.queue.shift();
    if (next) next(this.connection);
    else this.busy = false;
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await c.executeQuery(CompiledQuery.raw(`start transaction${level}`));
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('rollback'));
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}
