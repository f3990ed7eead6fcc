import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { PGliteOptions } from '@electric-sql/pglite';
import type { pgDump } from '@electric-sql/pglite-tools/pg_dump';
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
import { dataSection } from './pglite-dump.js';
import { PREPARED_STATEMENTS } from './pglite-statements.js';

/**
 * The worker: one PGlite, answering `{id, sql, params}` messages one after the other in the order
 * they came, each as soon as it is ready (answers held back to share one message
 * reached the main thread in bursts: PGlite runs the queries queued behind one without turning
 * to the event loop). CommonJS text run with `eval`, so that it needs no file beside a bundle;
 * it loads PGlite from the path the main thread resolved. An error crosses as its message and
 * its text and number fields (`code`, `constraint`, `detail`…), which the services read. A statement
 * with parameters runs as a prepared statement, one without as the unnamed statement (pglite-statements.ts).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite, protocol } = require(workerData.pglite);
${PREPARED_STATEMENTS}
let pgDump;
const opening = PGlite.create(workerData.dir, { startParams: [...PGlite.defaultStartParams, ...workerData.settings] });
const prepared = opening.then((db) => preparedStatements(db, protocol, workerData.statementsKept), () => undefined);
const answer = (a) => parentPort.postMessage(a);
const plain = (err) => {
  const out = { message: String(err && err.message || err) };
  for (const [k, v] of Object.entries(err || {})) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  return out;
};
// One message at a time: a statement prepared first must not let a later one run before it (a
// transaction's begin, sent after it, would take it in).
let turn = Promise.resolve();
parentPort.on('message', (message) => {
  turn = turn.then(() => handle(message)).catch((err) => answer({ id: message.id, error: plain(err) }));
});
async function handle({ id, sql, params, close, dump }) {
  let db;
  try {
    db = await opening;
  } catch (err) {
    answer({ id, error: plain(err) });
    return;
  }
  if (dump) {
    // pg_dump leaves its read-only transaction open (it would end with its connection) and the
    // session's search_path empty under it: both are put back before the next statement.
    const searchPath = (await db.query('show search_path')).rows[0].search_path;
    try {
      pgDump ??= require(workerData.pgDump).pgDump;
      const file = await pgDump({ pg: db, args: [...workerData.dumpArgs, ...dump] });
      const bytes = new Uint8Array(await file.arrayBuffer());
      parentPort.postMessage({ id, rows: [], dump: bytes }, [bytes.buffer]);
    } catch (err) {
      answer({ id, error: plain(err) });
    } finally {
      (await prepared).reset();
      if (db.isInTransaction()) await db.exec('rollback');
      await db.query("select pg_catalog.set_config('search_path', $1, false)", [searchPath]);
    }
    return;
  }
  // The first message only waits for the database to open.
  if (sql === undefined && !close) {
    answer({ id, rows: [] });
    return;
  }
  if (close) {
    await db.close();
    answer({ id, rows: [] });
    parentPort.close();
    return;
  }
  try {
    const statements = await prepared;
    const result = params && params.length > 0 ? await statements.query(sql, params) : await statements.once(sql);
    answer({ id, rows: result.rows, affectedRows: result.affectedRows });
  } catch (err) {
    answer({ id, error: plain(err) });
  }
}
`;

/** How many prepared statements the thread keeps (the most recently used). */
const STATEMENTS_KEPT = 200;

/** pg_dump's arguments (PGlite's adds `--inserts`): a dump that restores into any database, as whoever restores it. */
const DUMP_ARGS: NonNullable<Parameters<typeof pgDump>[0]['args']> = ['--no-owner', '--no-privileges'];

interface Answer {
  id: number;
  rows: unknown[];
  affectedRows?: number;
  dump?: Uint8Array;
  error?: Record<string, unknown> & { message: string };
}

/** PGlite in a worker thread: its queries no longer hold up the event loop that serves requests. */
export class PgliteThread {
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; reject: (err: Error) => void }>();
  private next = 0;
  /** The most queries that were in flight at once (tests read it). */
  maxInFlight = 0;
  private inFlight = 0;
  private exited: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (a: Answer) => {
      const w = this.waiting.get(a.id);
      this.waiting.delete(a.id);
      this.inFlight--;
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

  /**
   * Opens the database in `dir` (`memory://` for a throw-away one) with these Postgres settings
   * (after PGlite's own), keeping `statementsKept` prepared statements.
   */
  static async start(dir: string, settings: NonNullable<PGliteOptions['startParams']>, statementsKept = STATEMENTS_KEPT): Promise<PgliteThread> {
    const resolve = createRequire(import.meta.url).resolve;
    const workerData = { pglite: resolve('@electric-sql/pglite'), pgDump: resolve('@electric-sql/pglite-tools/pg_dump'), dumpArgs: DUMP_ARGS, dir, settings, statementsKept };
    const worker = new Worker(WORKER, { eval: true, workerData });
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

  /**
   * pg_dump compiled for PGlite, with these arguments besides DUMP_ARGS, whole in memory: pg_dump
   * writes to its in-memory file system and the thread answers it in one transferred buffer, so
   * it is asked only for the schema (`--section=pre-data`, `--section=post-data`; the rows come
   * from pglite-dump.ts). pg_dump runs synchronously in the thread, so no statement runs beside
   * it; the caller must keep transactions out (the driver's `dump` does).
   */
  async pgDump(args: string[]): Promise<Uint8Array> {
    const a = await this.send({ dump: args });
    if (a.error) throw Object.assign(new Error(a.error.message), a.error);
    return a.dump!;
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
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }
}

/** Kysely over a PgliteThread (the driver below: statements pipelined, transactions alone). */
export class PgliteThreadDialect implements Dialect {
  private readonly driver: PgliteThreadDriver;
  constructor(thread: PgliteThread) {
    this.driver = new PgliteThreadDriver(thread);
  }
  /** The database as plain SQL in pieces, taken between transactions (the driver's `dump`). */
  dump = () => this.driver.dump();
  /** A statement run past Kysely, after the open transaction's end (the driver's `query`). */
  query = (sql: string, parameters: readonly unknown[]) => this.driver.query(sql, parameters);
  createAdapter = () => new PostgresAdapter();
  createQueryCompiler = () => new PostgresQueryCompiler();
  createIntrospector = (db: Kysely<unknown>) => new PostgresIntrospector(db);
  createDriver = (): Driver => this.driver;
}

/**
 * One PGlite session shared by every caller. A statement outside a transaction is sent at once,
 * while others are in flight: the thread runs them in the order sent, and no longer idles
 * while this thread handles an answer and sends the next. A transaction has the session alone:
 * it begins after the statements sent before it, and statements of other callers wait for its end.
 */
class PgliteThreadDriver implements Driver {
  /** The connection whose transaction is open (or beginning), if any. */
  private owner: DatabaseConnection | undefined;
  /** Callers waiting for the open transaction's end: other transactions, and statements. */
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly thread: PgliteThread) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection: DatabaseConnection = {
      executeQuery: async <R>(q: CompiledQuery) => {
        while (this.owner && this.owner !== connection) await this.turn();
        return this.thread.query(q.sql, q.parameters) as Promise<QueryResult<R>>;
      },
      streamQuery: () => {
        throw new Error('streaming queries are not supported on PGlite');
      },
    };
    return connection;
  }

  async releaseConnection(): Promise<void> {}

  /** A statement outside any transaction: as a connection's, it waits for the open transaction's end. */
  async query(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    while (this.owner) await this.turn();
    return this.thread.query(sql, parameters);
  }

  /**
   * The database as plain SQL, in pieces as the reader asks for them: pg_dump's schema before the
   * rows (tables, sequences), the rows (pglite-dump.ts), then pg_dump's indexes, constraints and
   * triggers, so rows load before the foreign keys that check them. The dump has the session as a
   * transaction would, from its first piece until the last is read or the reader stops: it
   * starts after the open transaction's end, statements wait for its own, and nothing writes
   * between its three parts.
   */
  async *dump(): AsyncGenerator<Uint8Array> {
    while (this.owner) await this.turn();
    const alone: DatabaseConnection = { executeQuery: () => Promise.reject(new Error('dumping')), streamQuery: () => { throw new Error('dumping'); } };
    this.owner = alone;
    try {
      yield await this.thread.pgDump(['--section=pre-data']);
      const encoder = new TextEncoder();
      for await (const piece of dataSection((sql, params) => this.thread.query(sql, params))) yield encoder.encode(piece);
      yield await this.thread.pgDump(['--section=post-data']);
    } finally {
      this.end();
    }
  }

  async beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    while (this.owner) await this.turn();
    this.owner = c;
    const level = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    try {
      await c.executeQuery(CompiledQuery.raw(`start transaction${level}`));
    } catch (err) {
      this.end();
      throw err;
    }
  }

  async commitTransaction(c: DatabaseConnection): Promise<void> {
    await c.executeQuery(CompiledQuery.raw('commit')).finally(() => this.end());
  }

  /** After a failed commit the transaction is over already: the rollback that follows must not reach another's. */
  async rollbackTransaction(c: DatabaseConnection): Promise<void> {
    if (this.owner !== c) return;
    await c.executeQuery(CompiledQuery.raw('rollback')).finally(() => this.end());
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }

  private turn(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The transaction ended: everyone waiting looks again (statements go, one transaction begins). */
  private end(): void {
    this.owner = undefined;
    for (const wake of this.waiting.splice(0)) wake();
  }
}
