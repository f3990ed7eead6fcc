/**
 * libsql-server (dbE) through its own HTTP API: its image has no tool to run (no sqlite3, no
 * HTTP client), so a throw-away relay container shares the database container's network
 * namespace (database-containers.ts) and each connection is `nc 127.0.0.1 <port>` run in it
 * (docker exec), the agent speaking HTTP/1.1 over that stream. The credentials are the
 * container's own (`SQLD_HTTP_AUTH`) and travel only inside the stream.
 *
 * - A dump is `GET /dump`: SQL text, streamed.
 * - A restore replaces the database's whole content in one transaction of one Hrana stream
 *   (`POST /v2/pipeline`, the stream's baton carried from request to request): the existing
 *   triggers, views and tables dropped, then the dump's statements in batches of about
 *   RESTORE_BATCH_CHARS, then COMMIT. Any failure rolls it all back.
 * - A verification counts every table's rows the same way.
 */
import { type Duplex, Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ToolRun } from './database-containers.js';
import type { ToolCommand } from './tool-commands.js';
import { HttpAnswer } from './http-answer.js';
import { type DumpStatement, DumpStatements, withoutNuls } from './sqlite-statements.js';

/** Where the server listens and the Authorization header it takes, read from its container's variables. */
export interface LibsqlServer {
  port: number;
  authorization: string | null;
}

const DEFAULT_PORT = 8080;

/** The server of a container with these `NAME=value` variables, or why it cannot be reached. */
export function libsqlServerOf(env: readonly string[]): LibsqlServer | string {
  const vars = new Map(env.map((e) => [e.slice(0, Math.max(0, e.indexOf('='))), e.slice(e.indexOf('=') + 1)]));
  const listen = vars.get('SQLD_HTTP_LISTEN_ADDR');
  const port = listen ? Number(/:(\d{1,5})$/.exec(listen)?.[1]) : DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'the container’s SQLD_HTTP_LISTEN_ADDR names no port';
  const auth = vars.get('SQLD_HTTP_AUTH');
  if (!auth) return { port, authorization: null };
  const basic = /^basic:([A-Za-z0-9+/=]+)$/.exec(auth);
  if (!basic) return 'the container’s SQLD_HTTP_AUTH is not `basic:<base64>`: Skiff reaches libsql-server with its basic credentials';
  return { port, authorization: `Basic ${basic[1]}` };
}

/** The relay's connection to the server, inside the database container's network namespace. */
export const relayConnection = (port: number): ToolCommand => ({ tool: 'nc', argv: ['nc', '127.0.0.1', String(port)] });

/** The longest answer read whole (pipelines' results, refusals). */
const ANSWER_LIMIT = 16 * 1024 * 1024;
/** How long a failed connection waits for nc's own reason. */
const RELAY_EXIT_WAIT_MS = 2_000;

type HranaValue = { type: string; value?: string };
type HranaResult = { type: 'ok'; response: { type: string; result?: { rows: HranaValue[][] } } } | { type: 'error'; error: { message: string } };
export type HranaRequest = { type: 'execute'; stmt: { sql: string } } | { type: 'sequence'; sql: string } | { type: 'close' };

const execute = (sql: string): HranaRequest => ({ type: 'execute', stmt: { sql } });

/** A quoted SQLite name. */
const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class LibsqlHttp {
  /** `connect`: a new connection to the server (the relay's nc), as a tool run with input. */
  constructor(
    private readonly connect: () => Promise<ToolRun>,
    private readonly server: LibsqlServer,
  ) {}

  /**
   * One request on a connection of its own, written by hand and its answer read by HttpAnswer
   * (which gathers a body's pieces and copies none of it); the body is the caller's to read,
   * and the relay's connection ends with it.
   */
  private async send(method: 'GET' | 'POST', path: string, body?: string): Promise<{ status: number; body: HttpAnswer; cancel: () => void }> {
    const run = await this.connect();
    const answer = new HttpAnswer();
    // The answer reports the stream's failures; the exec's own streams are destroyed after it.
    for (const stream of [run.output, run.input!]) stream.on('error', () => undefined);
    answer.on('error', () => undefined);
    run.output.pipe(answer);
    run.output.once('error', (err) => answer.destroy(err));
    run.output.once('close', () => answer.writableEnded || answer.end());
    answer.once('close', () => run.cancel());
    run.input!.write(requestText(method, path, this.server.authorization, body));
    try {
      const head = await answer.head;
      return { status: head.status, body: answer, cancel: () => (run.cancel(), answer.destroy()) };
    } catch (err) {
      run.cancel();
      throw new Error(`libsql-server did not answer ${method} ${path} on port ${this.server.port}: ${await relayReason(run, err as Error)}`);
    }
  }

  /**
   * One Hrana pipeline on the stream `baton` (null: a new one); throws on the first error of
   * its results (a PipelineError, with the stream's next baton).
   */
  pipeline(baton: string | null, requests: HranaRequest[]): Promise<{ baton: string | null; results: HranaResult[] }> {
    const exchange = this.exchange(baton, requests);
    const settled = exchange.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => this.inFlight.delete(settled));
    return exchange;
  }

  /** Once the pipelines under way have ended (at most `ms`): the relay they go through may then go. */
  async settled(ms = SETTLE_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([...this.inFlight]), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  private readonly inFlight = new Set<Promise<void>>();

  private async exchange(baton: string | null, requests: HranaRequest[]): Promise<{ baton: string | null; results: HranaResult[] }> {
    const res = await this.send('POST', '/v2/pipeline', JSON.stringify({ baton, requests }));
    const text = await answerText(res);
    if (res.status !== 200) throw new Error(refusal(res.status, 'POST /v2/pipeline', text));
    const answer = JSON.parse(text) as { baton: string | null; results: HranaResult[] };
    for (const result of answer.results) {
      if (result.type === 'error') throw new PipelineError(`libsql-server: ${result.error.message}`, answer.baton);
    }
    return answer;
  }

  /** Null once `GET /health` answers 200; else why not. */
  async notReady(): Promise<string | null> {
    try {
      const res = await this.send('GET', '/health');
      const text = await answerText(res);
      return res.status === 200 ? null : refusal(res.status, 'GET /health', text);
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** `GET /dump` as a tool run: its output the dump's text, exited once the whole dump was read. */
  async dump(): Promise<ToolRun> {
    const res = await this.send('GET', '/dump');
    if (res.status !== 200) throw new Error(refusal(res.status, 'GET /dump', await answerText(res).catch(() => '')));
    const answer = res.body;
    const whole = new Promise<void>((resolve, reject) => {
      const cut = () => reject(new Error('libsql-server ended the dump before its end'));
      answer.once('end', () => (answer.complete ? resolve() : cut()));
      // The relay's stream ending mid-answer says nothing more.
      answer.once('error', cut);
      answer.once('close', () => reject(new Error('libsql-server closed the dump before its end')));
    });
    whole.catch(() => undefined);
    void whole.finally(res.cancel).catch(() => undefined);
    return { output: answer, input: null, exited: () => whole, cancel: res.cancel };
  }

  /** A restore as a tool run: the dump's text written to its input replaces the database's content, committed when the input ends. */
  restore(batchChars = RESTORE_BATCH_CHARS): ToolRun {
    const restore = new DumpRestore(this, batchChars);
    const input = new Writable({
      write: (chunk: Buffer, _encoding, done) => restore.write(chunk).then(() => done(), done),
      final: (done) => restore.end().then(() => done(), done),
      destroy: (err, done) => {
        void restore.abandon();
        done(err);
      },
    });
    const committed = new Promise<void>((resolve, reject) => {
      input.once('finish', resolve);
      input.once('error', reject);
      input.once('close', () => reject(new Error('the restore was stopped before its end')));
    });
    committed.catch(() => undefined);
    return { output: Readable.from([]), input: input as unknown as Duplex, exited: () => committed, cancel: () => input.destroy() };
  }

  /** Every table (but SQLite's own) with its row count, by name. */
  async tableCounts(): Promise<{ name: string; rows: string }[]> {
    const listed = await this.pipeline(null, [execute(TABLES), { type: 'close' }]);
    const names = rowsOf(listed.results[0]).map((row) => row[0]?.value ?? '');
    if (names.length === 0) return [];
    const counted = await this.pipeline(null, [...names.map((n) => execute(`SELECT count(*) FROM ${quoted(n)}`)), { type: 'close' }]);
    return names.map((name, i) => ({ name, rows: String(rowsOf(counted.results[i])[0]?.[0]?.value ?? '0') }));
  }
}

/** A pipeline whose results hold an error; the stream goes on with `baton`. */
export class PipelineError extends Error {
  constructor(
    message: string,
    readonly baton: string | null,
  ) {
    super(message);
  }
}

/** How long a relay is kept for the pipelines under way (a failed restore's rollback). */
const SETTLE_MS = 5_000;

/** About how much SQL text a restore sends a request (a single longer statement goes alone). */
export const RESTORE_BATCH_CHARS = 1024 * 1024;

const TABLES = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name";
/** The tables but virtual ones: a virtual table's creation adds its shadow tables. */
const PLAIN_TABLES = "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'";
/** What a restore drops first: triggers, views, virtual tables (their shadow tables go with them), then tables. */
const SCHEMA =
  "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('trigger', 'view', 'table') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' " +
  "ORDER BY CASE WHEN type = 'trigger' THEN 0 WHEN type = 'view' THEN 1 WHEN sql LIKE 'CREATE VIRTUAL%' THEN 2 ELSE 3 END, name";
/** The dump's own transaction: the restore runs the dump inside its own. */
const DUMP_TRANSACTION = /^(BEGIN(\s+TRANSACTION)?|COMMIT)\s*;$/i;
/** Around a virtual table's row written into sqlite_schema: libsql-server refuses this pragma. */
const WRITABLE_SCHEMA = /^PRAGMA\s+writable_schema\s*=\s*(ON|OFF)\s*;$/i;
/** How libsql-server's dumps (and sqlite3's) begin: another engine's file is refused before anything is sent. */
const DUMP_HEAD = /^\s*PRAGMA foreign_keys=OFF;\s+BEGIN TRANSACTION;\s/;
const DUMP_HEAD_CHARS = 64;

function rowsOf(result: HranaResult | undefined): HranaValue[][] {
  return result?.type === 'ok' ? (result.response.result?.rows ?? []) : [];
}

/** The restore's state between the writes of its input. */
class DumpRestore {
  private readonly statements = new DumpStatements();
  private readonly decoder = new StringDecoder('utf8');
  private baton: string | null = null;
  private begun = false;
  private batch: string[] = [];
  private batchChars = 0;
  /** The dump's last statement was its COMMIT: it is whole. */
  private whole = false;
  /** The text's beginning, until it was found to be a dump's. */
  private head: string | null = '';

  constructor(
    private readonly http: LibsqlHttp,
    private readonly limit: number,
  ) {}

  write(chunk: Buffer): Promise<void> {
    return this.orRollBack(async () => {
      await this.take(this.statements.push(this.checked(this.decoder.write(chunk), false)));
      if (this.batchChars >= this.limit) await this.flush();
    });
  }

  end(): Promise<void> {
    return this.orRollBack(async () => {
      await this.take(this.statements.push(this.checked(this.decoder.end(), true)));
      const { statements, rest } = this.statements.end();
      await this.take(statements);
      if (rest !== null || !this.whole) {
        throw new Error(`the file is not a whole libSQL dump: ${rest !== null ? `it ends inside a statement (${JSON.stringify(rest.slice(0, 80))})` : 'no COMMIT at its end'}`);
      }
      await this.flush();
      await this.send([execute('COMMIT'), { type: 'close' }]);
      this.baton = null;
    });
  }

  /** `text`, once the file's beginning is a dump's; else throws. */
  private checked(text: string, last: boolean): string {
    if (this.head === null) return text;
    this.head += text;
    if (this.head.length < DUMP_HEAD_CHARS && !last) return text;
    if (!DUMP_HEAD.test(this.head)) {
      throw new Error(`the file is not a libSQL dump: it does not begin with PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; (it begins with ${JSON.stringify(this.head.trimStart().slice(0, 24))})`);
    }
    this.head = null;
    return text;
  }

  /** Closes the stream, which rolls back what it ran: the database stays as it was. */
  abandon(): Promise<void> {
    const baton = this.baton;
    this.baton = null;
    return baton ? this.http.pipeline(baton, [{ type: 'close' }]).then(() => undefined, () => undefined) : Promise.resolve();
  }

  private async orRollBack(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      await this.abandon();
      throw err;
    }
  }

  private async take(statements: DumpStatement[]): Promise<void> {
    for (const statement of statements) {
      if ('virtualTable' in statement) {
        this.whole = false;
        await this.flush();
        await this.createVirtual(statement.virtualTable);
        continue;
      }
      const { sql } = statement;
      this.whole = /^COMMIT\s*;$/i.test(sql);
      if (DUMP_TRANSACTION.test(sql) || WRITABLE_SCHEMA.test(sql)) continue;
      this.batch.push(withoutNuls(sql));
      this.batchChars += sql.length;
    }
  }

  /**
   * The virtual table created by its module, its shadow tables (the tables its creation adds)
   * then emptied: the dump's next statements fill them as they were.
   */
  private async createVirtual(sql: string): Promise<void> {
    const { results } = await this.send([execute(PLAIN_TABLES), execute(sql), execute(PLAIN_TABLES)]);
    const before = new Set(rowsOf(results[0]).map((row) => row[0]?.value));
    const added = rowsOf(results[2]).map((row) => row[0]?.value ?? '').filter((table) => !before.has(table));
    this.batch.push(...added.map((table) => `DELETE FROM ${quoted(table)};`));
  }

  private async flush(): Promise<void> {
    if (!this.begun) {
      // Foreign keys are checked per connection, and not changed inside a transaction.
      const { results } = await this.send([execute('PRAGMA foreign_keys=OFF'), execute('BEGIN'), execute(SCHEMA)]);
      this.begun = true;
      const drops = rowsOf(results[2]).map(([type, name]) => `DROP ${(type?.value ?? '').toUpperCase()} IF EXISTS ${quoted(name?.value ?? '')};`);
      this.batch.unshift(...drops);
    }
    if (this.batch.length === 0) return;
    const sql = this.batch.join('\n');
    this.batch = [];
    this.batchChars = 0;
    await this.send([{ type: 'sequence', sql }]);
  }

  private async send(requests: HranaRequest[]) {
    try {
      const answer = await this.http.pipeline(this.baton, requests);
      this.baton = answer.baton;
      return answer;
    } catch (err) {
      if (err instanceof PipelineError) this.baton = err.baton;
      throw err;
    }
  }
}

/** An answer's whole body as text (at most ANSWER_LIMIT bytes); the connection is closed after. */
async function answerText(res: { body: HttpAnswer; cancel: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (length > ANSWER_LIMIT) throw new Error(`libsql-server’s answer is longer than ${ANSWER_LIMIT} bytes`);
      chunks.push(chunk);
    }
    if (!res.body.complete) throw new Error('libsql-server closed the connection before the end of its answer');
  } finally {
    res.cancel();
  }
  return Buffer.concat(chunks).toString('utf8');
}

function refusal(status: number | undefined, what: string, text: string): string {
  if (status === 401 || status === 403) return `libsql-server refused ${what} with the credentials of its container’s SQLD_HTTP_AUTH (${status})`;
  return `libsql-server answered ${what} with ${status}${text.trim() ? `: ${text.trim().slice(0, 300)}` : ''}`;
}

/** A request on a connection of its own, with its JSON body when it has one. */
function requestText(method: string, path: string, authorization: string | null, body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'connection: close'];
  if (authorization) lines.push(`authorization: ${authorization}`);
  if (body !== undefined) lines.push('content-type: application/json', `content-length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** Why a connection failed: nc's own words when it exited (the server not listening), else the HTTP client's. */
async function relayReason(run: ToolRun, err: Error): Promise<string> {
  const exited = await Promise.race([
    run.exited().then(() => null, (e: Error) => e.message),
    new Promise<null>((r) => setTimeout(() => r(null), RELAY_EXIT_WAIT_MS)),
  ]);
  return exited ?? err.message;
}
