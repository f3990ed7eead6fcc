// VerifyDatabase against the local postgres:17 (and mariadb:11) images and an S3-compatible server in this
// process: a dump of a real database restores in a throw-away container that reports its
// tables and exact row counts, and goes away; a corrupt file fails with the restore tool's
// reason, and its container goes too; the running database is never touched.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeScratchDatabases, SCRATCH_LABEL } from '../dumps/scratch-databases.js';
import { waitUntil } from '../testing/wait.js';
import { dumpDatabaseHandler } from './dump-database.js';
import { verifyDatabaseHandler } from './verify-database.js';

const run = randomBytes(3).toString('hex');
const SERVICE = `verify-pg-${run}`;
const CONTAINER = `${SERVICE}-task`;
const BUCKET = 'verify';
const PASSPHRASE = 'a passphrase long enough';
let s3dir: string;
let s3: S3rver;
let endpoint: string;
let client: S3Client;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));
const psql = (sql: string) => docker(['exec', CONTAINER, 'psql', '-U', 'shop', '-d', 'shop', '-tAc', sql]);
const scratchLeft = async () => (await docker(['ps', '-aq', '--filter', `label=${SCRATCH_LABEL}`, '--filter', `name=skiff-verify-cmd_${run}`])).out;

beforeAll(async () => {
  s3dir = await mkdtemp(join(tmpdir(), 'skiff-agent-s3-'));
  s3 = new S3rver({ port: 0, address: '127.0.0.1', directory: s3dir, silent: true, configureBuckets: [{ name: BUCKET }] });
  endpoint = `http://127.0.0.1:${(await s3.run()).port}`;
  client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  const started = await docker(['run', '-d', '--name', CONTAINER, '--label', `com.docker.swarm.service.name=${SERVICE}`, '-e', 'POSTGRES_PASSWORD=pw', '-e', 'POSTGRES_USER=shop', '-e', 'POSTGRES_DB=shop', 'postgres:17']);
  expect(started.ok, started.out).toBe(true);
  await waitUntil('PostgreSQL to answer', async () => (await psql('SELECT 1')).ok, 60_000, 250);
}, 90_000);
afterAll(async () => {
  await docker(['rm', '-f', '-v', CONTAINER]);
  client?.destroy();
  await s3?.close();
  await rm(s3dir, { recursive: true, force: true });
});

const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'dbs_1', appName: SERVICE }, serviceName: '', engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'shop' };
const objectOf = (key: string, passphrase = '') => ({ endpoint, region: 'us-east-1', bucket: BUCKET, key, accessKey: 'S3RVER', secretKey: 'S3RVER', passphrase });
const envelope = (kind: CommandKind, payload: Command['payload']): Command => ({
  commandId: `cmd_${run}_${randomBytes(3).toString('hex')}`,
  serverId: 'local',
  kind,
  workloadKey: 'database:dbs_1',
  deadline: undefined,
  createdAt: undefined,
  payload,
});
const dumpCommand = (key: string, passphrase = '') => envelope(CommandKind.COMMAND_KIND_DUMP_DATABASE, { $case: 'dumpDatabase', value: { target, object: objectOf(key, passphrase) } });
const verifyCommand = (key: string, passphrase = '') =>
  envelope(CommandKind.COMMAND_KIND_VERIFY_DATABASE, { $case: 'verifyDatabase', value: { target, object: objectOf(key, passphrase), image: 'postgres:17' } });
const context = (c: Command) => ({ command: c, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
const dockerode = () => new Dockerode({ socketPath: '/var/run/docker.sock' });
const verifier = () => verifyDatabaseHandler({ containers: new DockerodeDatabaseContainers(dockerode()), scratch: new DockerodeScratchDatabases(dockerode()), pollMs: 250 });

describe('verifying a database backup on the agent', () => {
  it('restores an encrypted dump in a throw-away container, reports its tables and row counts, then removes it', async () => {
    expect((await psql("CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 42) g; CREATE SCHEMA shop; CREATE TABLE shop.\"odd name\" (x int)")).ok).toBe(true);
    const dump = dumpDatabaseHandler({ containers: new DockerodeDatabaseContainers(dockerode()) });
    expect(await dump.run(context(dumpCommand('p/bkp/1.dump.gz.age', PASSPHRASE)))).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });

    const verify = verifier();
    const c = verifyCommand('p/bkp/1.dump.gz.age', PASSPHRASE);
    expect(await verify.validate(c)).toBeNull();
    const outcome = await verify.run(context(c));
    expect(outcome).toEqual({
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
      verification: { tables: [{ name: 'public.items', rows: '42' }, { name: 'shop.odd name', rows: '0' }] },
    });
    expect(await scratchLeft()).toBe('');
    // The running database was not touched.
    expect((await psql('SELECT count(*) FROM items')).out).toBe('42');
  }, 240_000);

  it('fails a corrupt file with the restore tool’s reason, and removes its container', async () => {
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'p/bkp/corrupt.dump.gz', Body: gzipSync(Buffer.from('PGDMP but not really a dump')) }));
    const outcome = await verifier().run(context(verifyCommand('p/bkp/corrupt.dump.gz')));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^the file does not restore: pg_restore exited with 1: /);
    expect(outcome.verification).toBeUndefined();
    expect(await scratchLeft()).toBe('');

    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'p/bkp/not-gzip.dump.gz', Body: Buffer.from('plain text') }));
    const notGzip = await verifier().run(context(verifyCommand('p/bkp/not-gzip.dump.gz')));
    expect(notGzip.reason).toMatch(/^the file does not restore: .*(incorrect header check|pg_restore)/);
    expect(await scratchLeft()).toBe('');
  }, 240_000);

  it('verifies a MariaDB dump in a throw-away mariadb:11 container', async () => {
    const sql = 'CREATE TABLE `items` (id int PRIMARY KEY); INSERT INTO `items` VALUES (1),(2),(3); CREATE TABLE `odd``name` (x int);';
    await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'm/bkp/1.sql.gz', Body: gzipSync(Buffer.from(sql)) }));
    const c = verifyCommand('m/bkp/1.sql.gz');
    if (c.payload?.$case === 'verifyDatabase') Object.assign(c.payload.value, { image: 'mariadb:11', target: { ...target, engine: DatabaseEngine.DATABASE_ENGINE_MARIADB } });
    expect(await verifier().run(context(c))).toEqual({
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
      verification: { tables: [{ name: 'items', rows: '3' }, { name: 'odd`name', rows: '0' }] },
    });
    expect(await scratchLeft()).toBe('');
  }, 240_000);

  it('refuses an engine it cannot verify, and a command without an image; takes MongoDB', async () => {
    const mongo = verifyCommand('p/bkp/1.archive.gz');
    if (mongo.payload?.$case === 'verifyDatabase') mongo.payload.value.target = { ...target, engine: DatabaseEngine.DATABASE_ENGINE_MONGO };
    // Its tools are golden-tested (dumps/verify-tools.spec.ts): no MongoDB image runs here.
    expect(await verifier().validate(mongo)).toBeNull();
    const unknown = verifyCommand('p/bkp/1.dump.gz');
    if (unknown.payload?.$case === 'verifyDatabase') unknown.payload.value.target = { ...target, engine: DatabaseEngine.DATABASE_ENGINE_UNSPECIFIED };
    expect(await verifier().validate(unknown)).toBe('this engine cannot be verified here');
    const imageless = verifyCommand('p/bkp/1.dump.gz');
    if (imageless.payload?.$case === 'verifyDatabase') imageless.payload.value.image = '';
    expect(await verifier().validate(imageless)).toBe('the command names no image');
  });
});
