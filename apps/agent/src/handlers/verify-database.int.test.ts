// VerifyDatabase against the local postgres:17 (and mariadb:11) images and an S3-compatible server in this
// process: a dump of a real database restores in a throw-away container that reports its
// tables and exact row counts, and goes away; a corrupt file fails with the restore tool's
// reason, and its container goes too; the running database is never touched. A compose
// stack's service (the same container, labelled as Docker Compose labels a project's) verifies
// in a container of the image it was deployed with, its own container and volume untouched; a
// stack's service whose image is not on the server (a Swarm stack's service without tasks) is
// refused with that reason, nothing pulled. An image without the tools of the backup's engine
// (a PostgreSQL backup of a service running MariaDB) is refused naming them, before any
// server starts.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { type Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import Dockerode from 'dockerode';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerodeDatabaseContainers } from '../dumps/database-containers.js';
import { DockerodeScratchDatabases, SCRATCH_LABEL } from '../dumps/scratch-databases.js';
import { waitUntil } from '../testing/wait.js';
import { dumpDatabaseHandler } from './dump-database.js';
import { verifyDatabaseHandler } from './verify-database.js';
import { startTestS3, type TestS3 } from '../testing/test-s3.js';

const run = randomBytes(3).toString('hex');
const SERVICE = `verify-pg-${run}`;
const CONTAINER = `${SERVICE}-task`;
/** The compose project CONTAINER also belongs to, as its `db` service. */
const STACK = `verify-stack-${run}`;
/** A Swarm stack whose `db` service names an image this server does not have. */
const ABSENT_STACK = `verify-absent-${run}`;
const ABSENT_IMAGE = `skiff-verify-absent-${run}:1`;
const BUCKET = 'verify';
const PASSPHRASE = 'a passphrase long enough';
let s3: TestS3;

const docker = (args: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) => execFile('docker', args, (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })));
const psql = (sql: string) => docker(['exec', CONTAINER, 'psql', '-U', 'shop', '-d', 'shop', '-tAc', sql]);
const scratchLeft = async () => (await docker(['ps', '-aq', '--filter', `label=${SCRATCH_LABEL}`, '--filter', `name=skiff-verify-cmd_${run}`])).out;

beforeAll(async () => {
  s3 = await startTestS3(BUCKET);
  const started = await docker(['run', '-d', '--name', CONTAINER, '--label', `com.docker.swarm.service.name=${SERVICE}`, '--label', `com.docker.compose.project=${STACK}`, '--label', 'com.docker.compose.service=db', '-e', 'POSTGRES_PASSWORD=pw', '-e', 'POSTGRES_USER=shop', '-e', 'POSTGRES_DB=shop', 'postgres:17']);
  expect(started.ok, started.out).toBe(true);
  await waitUntil('PostgreSQL to answer', async () => (await psql('SELECT 1')).ok, 60_000, 250);
}, 90_000);
afterAll(async () => {
  await docker(['rm', '-f', '-v', CONTAINER]);
  await docker(['service', 'rm', `${ABSENT_STACK}_db`]);
  await s3?.stop();
});

const target = { workload: { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: 'dbs_1', appName: SERVICE }, serviceName: '', engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'shop' };
const objectOf = (key: string, passphrase = '') => s3.object(key, { passphrase });
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
/** A dump or a verification of the `db` service of compose project `project`; a verification names no image. */
const composeCommand = (kind: CommandKind, project: string, key: string): Command => {
  const value = { target: { ...target, workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: 'cmp_1', appName: project }, serviceName: 'db' }, object: objectOf(key) };
  const c = kind === CommandKind.COMMAND_KIND_DUMP_DATABASE ? envelope(kind, { $case: 'dumpDatabase', value }) : envelope(kind, { $case: 'verifyDatabase', value: { ...value, image: '' } });
  return { ...c, workloadKey: 'compose:cmp_1' };
};
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
    await s3.write('p/bkp/corrupt.dump.gz', gzipSync(Buffer.from('PGDMP but not really a dump')));
    const outcome = await verifier().run(context(verifyCommand('p/bkp/corrupt.dump.gz')));
    expect(outcome.status).toBe(CommandStatus.COMMAND_STATUS_FAILED);
    expect(outcome.reason).toMatch(/^the file does not restore: pg_restore exited with 1: /);
    expect(outcome.verification).toBeUndefined();
    expect(await scratchLeft()).toBe('');

    await s3.write('p/bkp/not-gzip.dump.gz', Buffer.from('plain text'));
    const notGzip = await verifier().run(context(verifyCommand('p/bkp/not-gzip.dump.gz')));
    expect(notGzip.reason).toMatch(/^the file does not restore: .*(incorrect header check|pg_restore)/);
    expect(await scratchLeft()).toBe('');
  }, 240_000);

  it('verifies a MariaDB dump in a throw-away mariadb:11 container', async () => {
    const sql = 'CREATE TABLE `items` (id int PRIMARY KEY); INSERT INTO `items` VALUES (1),(2),(3); CREATE TABLE `odd``name` (x int);';
    await s3.write('m/bkp/1.sql.gz', gzipSync(Buffer.from(sql)));
    const c = verifyCommand('m/bkp/1.sql.gz');
    if (c.payload?.$case === 'verifyDatabase') Object.assign(c.payload.value, { image: 'mariadb:11', target: { ...target, engine: DatabaseEngine.DATABASE_ENGINE_MARIADB } });
    expect(await verifier().run(context(c))).toEqual({
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
      verification: { tables: [{ name: 'items', rows: '3' }, { name: 'odd`name', rows: '0' }] },
    });
    expect(await scratchLeft()).toBe('');
  }, 240_000);

  it('verifies a compose stack’s service in a container of its deployed image, never touching the stack’s container or volume', async () => {
    expect((await psql("CREATE TABLE public.stack_items (id int); INSERT INTO public.stack_items SELECT generate_series(1, 7)")).ok).toBe(true);
    const dump = dumpDatabaseHandler({ containers: new DockerodeDatabaseContainers(dockerode()) });
    expect(await dump.run(context(composeCommand(CommandKind.COMMAND_KIND_DUMP_DATABASE, STACK, 'c/bkp/1.dump.gz')))).toEqual({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
    const stackState = async () => (await docker(['inspect', '--format', '{{.Id}} {{.State.Status}} {{.State.StartedAt}} {{range .Mounts}}{{.Name}} {{end}}', CONTAINER])).out;
    const before = await stackState();
    const volume = before.split(' ')[3]!;
    expect(volume).toMatch(/^[0-9a-f]{64}$/);

    // No image in the command: the agent reads the one the stack's service runs.
    const c = composeCommand(CommandKind.COMMAND_KIND_VERIFY_DATABASE, STACK, 'c/bkp/1.dump.gz');
    expect(await verifier().validate(c)).toBeNull();
    const outcome = await verifier().run(context(c));
    expect(outcome.status, outcome.reason).toBe(CommandStatus.COMMAND_STATUS_SUCCEEDED);
    expect(outcome.verification?.tables).toContainEqual({ name: 'public.stack_items', rows: '7' });
    expect(await scratchLeft()).toBe('');
    expect(await stackState()).toBe(before);
    expect((await docker(['volume', 'inspect', '--format', '{{.Name}}', volume])).out).toBe(volume);
    expect((await psql('SELECT count(*) FROM public.stack_items')).out).toBe('7');
  }, 240_000);

  it('refuses a stack’s service whose image is not on this server, and one that is not deployed here, pulling nothing', async () => {
    const created = await docker(['service', 'create', '--detach', '--quiet', '--replicas', '0', '--no-resolve-image', '--name', `${ABSENT_STACK}_db`, '--label', `com.docker.stack.namespace=${ABSENT_STACK}`, ABSENT_IMAGE]);
    expect(created.ok, created.out).toBe(true);
    const absent = await verifier().run(context(composeCommand(CommandKind.COMMAND_KIND_VERIFY_DATABASE, ABSENT_STACK, 'c/bkp/1.dump.gz')));
    expect(absent).toEqual({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: `the image ${ABSENT_IMAGE} of ${ABSENT_STACK} service db is not on this server: a verification never pulls an image (deploy the stack here first)`,
    });
    expect((await docker(['image', 'inspect', ABSENT_IMAGE])).ok).toBe(false);
    expect(await scratchLeft()).toBe('');

    const nowhere = await verifier().run(context(composeCommand(CommandKind.COMMAND_KIND_VERIFY_DATABASE, `verify-nowhere-${run}`, 'c/bkp/1.dump.gz')));
    expect(nowhere).toEqual({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: `no container nor Swarm service of verify-nowhere-${run} service db on this server: deploy the stack first`,
    });

    // A database service's image is checked the same way before anything starts.
    const database = verifyCommand('p/bkp/1.dump.gz');
    if (database.payload?.$case === 'verifyDatabase') database.payload.value.image = ABSENT_IMAGE;
    expect((await verifier().run(context(database))).reason).toBe(`the image ${ABSENT_IMAGE} is not on this server: a verification never pulls an image`);
  }, 60_000);

  it('refuses an image without the tools of the backup’s engine before any server starts, naming them', async () => {
    // A PostgreSQL backup (its databaseType) of a service that runs MariaDB.
    const database = verifyCommand('p/bkp/1.dump.gz');
    if (database.payload?.$case === 'verifyDatabase') database.payload.value.image = 'mariadb:11';
    const started = Date.now();
    expect(await verifier().run(context(database))).toEqual({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: 'the image mariadb:11 has no pg_isready, pg_restore, psql: it is not a PostgreSQL image, and the backup’s databaseType says its files are PostgreSQL dumps',
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await scratchLeft()).toBe('');

    // A MariaDB backup of a compose stack's service that runs postgres:17.
    const stack = composeCommand(CommandKind.COMMAND_KIND_VERIFY_DATABASE, STACK, 'c/bkp/1.dump.gz');
    if (stack.payload?.$case === 'verifyDatabase') stack.payload.value.target!.engine = DatabaseEngine.DATABASE_ENGINE_MARIADB;
    expect(await verifier().run(context(stack))).toEqual({
      status: CommandStatus.COMMAND_STATUS_FAILED,
      reason: `the image postgres:17 of ${STACK} service db has no mariadb: it is not a MariaDB image, and the backup’s databaseType says its files are MariaDB dumps`,
    });
    expect(await scratchLeft()).toBe('');
  }, 60_000);

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
