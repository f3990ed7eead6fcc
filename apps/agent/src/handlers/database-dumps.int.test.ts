// DumpDatabase and RestoreDatabase against a real PostgreSQL container (the local postgres:17
// image, labelled as a Swarm task of the service the commands name) and an S3-compatible
// server in this process: a dump lands gzipped in the bucket and restores the rows; a dump
// to a missing bucket fails with S3's error and leaves no dump running; a restore of a file
// that is not a dump fails with pg_restore's own message.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { waitUntil } from '../testing/wait.js';
import { dumpDatabaseHandler } from './dump-database.js';
import { restoreDatabaseHandler } from './restore-database.js';
import { S3RVER_KEY, startTestS3, type TestS3 } from '../testing/test-s3.js';

const run = randomBytes(3).toString('hex');
const SERVICE = `dumps-pg-${run}`;
const CONTAINER = `${SERVICE}-task`;
const BUCKET = 'dumps';
/** The container's password: a failure's reason must never show it. */
const PASSWORD = `pg-secret-${run}`;
let s3: TestS3;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));
const psql = (sql: string) => docker(['exec', CONTAINER, 'psql', '-U', 'shop', '-d', 'shop', '-tAc', sql]);

beforeAll(async () => {
  s3 = await startTestS3(BUCKET);
  const started = await docker(['run', '-d', '--name', CONTAINER, '--label', `com.docker.swarm.service.name=${SERVICE}`,
    // Also a Docker Compose project's `db` service: a compose backup finds it by these labels.
    '--label', `com.docker.compose.project=${SERVICE}-stack`, '--label', 'com.docker.compose.service=db', '-e', `POSTGRES_PASSWORD=${PASSWORD}`, '-e', 'POSTGRES_USER=shop', '-e', 'POSTGRES_DB=shop', 'postgres:17']);
  expect(started.ok, started.out).toBe(true);
  await waitUntil('PostgreSQL to answer', async () => (await psql('SELECT 1')).ok, 60_000, 250);
}, 90_000);
afterAll(async () => {
  await docker(['rm', '-f', '-v', CONTAINER]);
  await s3?.stop();
});

const containers = () => new DockerodeDatabaseContainers(new Dockerode({ socketPath: '/var/run/docker.sock' }));
const command = (kind: 'dump' | 'restore', key: string, bucket = BUCKET): Command => {
  const value = {
    target: { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'dbs_1', appName: SERVICE }, serviceName: '', engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'shop' },
    object: s3.object(key, { bucket }),
  };
  return {
    commandId: `cmd_${randomBytes(4).toString('hex')}`,
    serverId: 'local',
    kind: kind === 'dump' ? CommandKind.COMMAND_KIND_DUMP_DATABASE : CommandKind.COMMAND_KIND_RESTORE_DATABASE,
    workloadKey: 'database:dbs_1',
    deadline: undefined,
    createdAt: undefined,
    payload: kind === 'dump' ? { $case: 'dumpDatabase', value } : { $case: 'restoreDatabase', value },
  };
};
const context = (c: Command) => ({ command: c, signal: new AbortController().signal, deadline: null, resumed: false, log: pino({ level: 'silent' }) });
const object = (key: string) => s3.read(key);
const dumpsRunning = async () => (await docker(['top', CONTAINER])).out.split('\n').filter((l) => /pg_dump/.test(l)).length;

describe('database dumps and restores on the agent', () => {
  it('dumps into the bucket through gzip, and restores the rows from it', async () => {
    expect((await psql("CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items VALUES (1, 'anchor'), (2, 'buoy')")).ok).toBe(true);
    const dump = dumpDatabaseHandler({ containers: containers() });
    const c = command('dump', 'p/bkp/1.dump.gz');
    expect(await dump.validate(c)).toBeNull();
    expect(await dump.run(context(c))).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    expect(gunzipSync(await object('p/bkp/1.dump.gz')).subarray(0, 5).toString()).toBe('PGDMP');

    expect((await psql('DROP TABLE items')).ok).toBe(true);
    const restore = restoreDatabaseHandler({ containers: containers() });
    expect(await restore.run(context(command('restore', 'p/bkp/1.dump.gz')))).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    expect((await psql('SELECT name FROM items ORDER BY id')).out).toBe('anchor\nbuoy');
  });

  it('fails with S3’s error for a missing bucket, leaving no dump running', async () => {
    const outcome = await dumpDatabaseHandler({ containers: containers() }).run(context(command('dump', 'p/bkp/2.dump.gz', 'no-such-bucket')));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/NoSuchBucket/);
    expect(outcome.reason).not.toContain(S3RVER_KEY);
    await waitUntil('the dump to end', async () => (await dumpsRunning()) === 0, 10_000, 100);
  });

  it('fails with the restore tool’s message for a file that is not a dump, and refuses option-like names', async () => {
    await s3.write('p/bkp/bad.dump.gz', gzipSync(Buffer.from('not a dump')));
    const outcome = await restoreDatabaseHandler({ containers: containers() }).run(context(command('restore', 'p/bkp/bad.dump.gz')));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/pg_restore exited with 1: .*input file/);
    const hostile = command('dump', 'p/bkp/3.dump.gz');
    if (hostile.payload?.$case === 'dumpDatabase') hostile.payload.value.target!.database = '--help';
    expect(await dumpDatabaseHandler({ containers: containers() }).validate(hostile)).toMatch(/starts with "-"/);
  });

  it('leaves no object of a dump whose tool failed, not even one its upload completes after the failure', async () => {
    // pg_dump exits 1 at once: its (empty) output ends normally, so the upload goes on to store it.
    const c = command('dump', 'p/bkp/failed.dump.gz');
    if (c.payload?.$case === 'dumpDatabase') c.payload.value.target!.database = 'no_such_database';
    const outcome = await dumpDatabaseHandler({ containers: containers() }).run(context(c));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/pg_dump exited with 1/);
    const stored = async () => (await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'p/bkp/failed' }))).KeyCount ?? 0;
    await expect(waitUntil('an object of the failed dump', async () => (await stored()) > 0, 3_000, 100)).rejects.toThrow(/timed out/);
  });

  it('scrubs the failure’s reason of the container’s secret variables', async () => {
    // pg_restore names the database it could not reach: here the password itself, as a stand-in for any stderr echoing it.
    const echoing = command('restore', 'p/bkp/1.dump.gz');
    if (echoing.payload?.$case === 'restoreDatabase') {
      echoing.payload.value.target!.database = PASSWORD;
      echoing.payload.value.object!.passphrase = '';
    }
    const outcome = await restoreDatabaseHandler({ containers: containers() }).run(context(echoing));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).not.toContain(PASSWORD);
    expect(outcome.reason).toContain('hidden');
  });

  it('finds a compose stack’s service by its project and service labels', async () => {
    const c = command('dump', 'p/cmp/1.dump.gz');
    if (c.payload?.$case === 'dumpDatabase') Object.assign(c.payload.value.target!, { serviceName: 'db', workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'cmp_1', appName: `${SERVICE}-stack` } });
    expect(await dumpDatabaseHandler({ containers: containers() }).run(context(c))).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    expect(gunzipSync(await object('p/cmp/1.dump.gz')).subarray(0, 5).toString()).toBe('PGDMP');
  });

  it('says so when the database has no running container', async () => {
    const c = command('dump', 'p/bkp/4.dump.gz');
    if (c.payload?.$case === 'dumpDatabase') c.payload.value.target!.workload!.appName = `nothing-${run}`;
    const outcome = await dumpDatabaseHandler({ containers: containers() }).run(context(c));
    expect(outcome).toEqual({ status: CommandStatus.COMMAND_STATUS_FAILED, reason: `no running container of nothing-${run}: start the database first` });
  });
});
