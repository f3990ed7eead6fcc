// A database inside a compose stack backed up and restored end to end (testing/stack.ts: API,
// outbox relay, NATS, report server, the agent process, the engine; Debian's docker-compose v1
// and the local postgres:17 and mariadb:11 images; an S3-compatible server in this process): a
// raw stack with a `db` service of each engine deployed through the API, rows written with docker exec, a compose backup of
// that service (serviceName, databaseType, the metadata of its credentials) run with
// `manualBackupCompose` and listed, the table dropped, the file restored into the stack's
// service (refused without force), the rows back and the restore's record done with its log;
// each backup verified (backup.verify) in a throw-away container of the service's image; for
// MariaDB also a newest file that is not a dump (fails with the restore tool's reason) and a
// PostgreSQL (dbA) backup of that MariaDB service (refused naming the tools the image lacks), the
// stack's containers untouched; a compose backup to a bucket that does not exist fails with S3's
// error in its event.
import { gzipSync } from 'node:zlib';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from './testing/s3-server.js';
import { docker, startTestStack, type TestStack } from './testing/stack.js';

const BUCKET = 'skiff-e2e-compose-dumps';
let s: TestStack;
let s3: Awaited<ReturnType<typeof startS3>>;
/** appNames of the stacks the tests created: whatever of them a failed test left is removed after all. */
const stacks: string[] = [];
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  s = await startTestStack('compose-backup');
}, 120_000);
afterAll(async () => {
  await s?.close();
  await s3?.close();
  for (const appName of stacks) await removeLeftovers(appName);
}, 120_000);

/** Whatever of the stack is still on the engine (a failed test's), found by Compose's project label. */
async function removeLeftovers(project: string) {
  const label = `label=com.docker.compose.project=${project}`;
  const containers = (await docker(['ps', '-aq', '--filter', label])).out.split(/\s+/).filter(Boolean);
  if (containers.length > 0) await docker(['rm', '-f', '-v', ...containers]);
  for (const kind of ['volume', 'network']) {
    const names = (await docker([kind, 'ls', '-q', '--filter', label])).out.split(/\s+/).filter(Boolean);
    if (names.length > 0) await docker([kind, 'rm', ...names]);
  }
}

const call = (op: string, input: Record<string, unknown>) => s.t.call(op, input);
const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};
const agentTail = () => s.agentOutput().slice(-3000);

/**
 * A client in the stack's running `db` container, as the service's user over TCP (the images'
 * first-start server listens on the socket only, and restarts): its output, or its error.
 */
async function inDb(appName: string, argv: string[], env: string[] = []) {
  const id = (await docker(['ps', '-q', '--filter', `label=com.docker.compose.project=${appName}`, '--filter', 'label=com.docker.compose.service=db'])).out;
  if (!id) return { ok: false, out: 'no db container' };
  return docker(['exec', ...env.flatMap((e) => ['-e', e]), id, ...argv]);
}

interface Engine {
  databaseType: 'dbA' | 'dbB';
  extension: string;
  /** The `db` service of the compose file, its credentials from `password`. */
  service(password: string): string[];
  /** The statement's rows, tab- or bar-separated as the client writes them. */
  sql(appName: string, password: string, statement: string): Promise<{ ok: boolean; out: string }>;
  rows: string;
  /** The table as a verification names it. */
  table: string;
}

const ENGINES: Record<string, Engine> = {
  PostgreSQL: {
    databaseType: 'dbA',
    extension: 'dump.gz',
    service: (password) => [
      '    image: postgres:17',
      '    environment:',
      '      POSTGRES_USER: shop',
      `      POSTGRES_PASSWORD: ${password}`,
      '      POSTGRES_DB: shop',
      '    volumes:',
      '      - data:/var/lib/postgresql/data',
    ],
    sql: (appName, password, statement) => inDb(appName, ['psql', '-h', '127.0.0.1', '-U', 'shop', '-d', 'shop', '-tAqc', statement], [`PGPASSWORD=${password}`]),
    rows: '1|anchor\n2|buoy\n3|cleat',
    table: 'public.items',
  },
  MariaDB: {
    databaseType: 'dbB',
    extension: 'sql.gz',
    service: (password) => [
      '    image: mariadb:11',
      '    environment:',
      `      MARIADB_ROOT_PASSWORD: ${password}-root`,
      '      MARIADB_DATABASE: shop',
      '      MARIADB_USER: shop',
      `      MARIADB_PASSWORD: ${password}`,
      '    volumes:',
      '      - data:/var/lib/mysql',
    ],
    sql: (appName, password, statement) => inDb(appName, ['mariadb', '-h', '127.0.0.1', '-u', 'shop', '-N', '-B', 'shop', '-e', statement], [`MYSQL_PWD=${password}`]),
    rows: '1\tanchor\n2\tbuoy\n3\tcleat',
    table: 'items',
  },
};

describe.each(Object.entries(ENGINES))('a %s service of a compose stack', (label, engine) => {
  it('backs up by serviceName to S3, lists its file, and restores its rows into the stack’s service', async () => {
    const appName = `shop-${engine.databaseType.toLowerCase()}-${s.run}`;
    stacks.push(appName);
    const password = `cmp-${s.run}-pw`;
    const file = ['services:', '  db:', ...engine.service(password), 'volumes:', '  data: {}', ''].join('\n');
    const sql = (statement: string) => engine.sql(appName, password, statement);
    const { composeId } = await ok('compose.create', { name: 'shop', appName, environmentId: s.environmentId, sourceType: 'raw', composeType: 'container-compose' });
    await ok('compose.update', { composeId, composeFile: file });
    const { deploymentId } = await ok('compose.deploy', { composeId });
    await waitFor(async () => (await ok('compose.one', { composeId })).applicationStatus === 'done', {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: `deployment ${deploymentId} of ${appName} (agent output: ${agentTail()})`,
    });
    await waitFor(async () => (await sql('SELECT 1')).ok, { timeoutMs: 60_000, intervalMs: 250, what: `${label} in the stack to accept connections` });
    const write = await sql("CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40)); INSERT INTO items VALUES (1, 'anchor'), (2, 'buoy'), (3, 'cleat');");
    expect(write.ok, write.out).toBe(true);
    const rows = async () => (await sql('SELECT id, name FROM items ORDER BY id')).out;
    expect(await rows()).toBe(engine.rows);

    // The backup names the stack's service and the credentials its environment gives it.
    const destination = await ok('destination.create', { name: `cmp-${engine.databaseType}-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
    const backup = await ok('backup.create', {
      schedule: '0 3 * * *',
      prefix: `cmp-${s.run}/`,
      destinationId: destination.destinationId,
      database: 'shop',
      databaseType: engine.databaseType,
      backupType: 'compose',
      composeId,
      serviceName: 'db',
      keepLatestCount: null,
      metadata: { [engine.databaseType]: { databaseUser: 'shop', databasePassword: password } },
    });
    expect(backup).toMatchObject({ backupType: 'compose', composeId, serviceName: 'db', metadata: { [engine.databaseType]: { databaseUser: 'shop', hasDatabasePassword: true } } });
    expect(JSON.stringify(backup)).not.toContain(password);

    const run = await ok('backup.manualBackupCompose', { backupId: backup.backupId });
    expect(run.files).toHaveLength(1);
    const key = run.files[0] as string;
    expect(key).toMatch(new RegExp(`^cmp-${s.run}/${backup.backupId}/[0-9T-]+Z\\.${engine.extension.replace('.', '\\.')}$`));
    const stored = await s3.get(BUCKET, key);
    expect(run.size).toBe(stored.length);
    const listed = await ok('backup.listBackupFiles', { destinationId: destination.destinationId, search: `cmp-${s.run}/${backup.backupId}/` });
    expect(listed).toEqual([expect.objectContaining({ key, size: stored.length })]);
    const events = await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute();
    expect(events.find((e) => (e.summary as { backupId?: string }).backupId === backup.backupId)).toMatchObject({ outcome: 'success', summary: { files: [key] } });

    await verifiesBesideTheStack(appName, backup.backupId, key, engine.table);
    if (engine.databaseType === 'dbB') {
      await failsOnANewestFileThatIsNoDump(appName, backup.backupId, key);
      await refusesAPostgresBackupOfMariaDB(appName, composeId, destination.destinationId);
    }

    // The table dropped. The stack's database runs: a restore without force is refused and queues nothing.
    expect((await sql('DROP TABLE items')).ok).toBe(true);
    const commandsBefore = (await s.t.db.selectFrom('commands').select('id').execute()).length;
    const unforced = await call('backup.restore', { backupId: backup.backupId, key });
    expect(unforced.status, JSON.stringify(unforced.body)).toBe(400);
    expect(unforced.body.issues[0].path).toEqual(['force']);
    expect((await s.t.db.selectFrom('commands').select('id').execute()).length).toBe(commandsBefore);

    const restore = await ok('backup.restore', { backupId: backup.backupId, key, force: true });
    const ended = await waitFor(
      async () => {
        const r = await ok('backup.oneRestore', { restoreId: restore.restoreId });
        return r.status === 'running' ? null : r;
      },
      { timeoutMs: 120_000, intervalMs: 250, what: `the restore to end (agent output: ${agentTail()})` },
    );
    expect(ended, JSON.stringify(ended)).toMatchObject({ status: 'done', key, databaseId: null, composeId, serviceName: 'db', log: expect.stringContaining(key) });
    expect(await rows()).toBe(engine.rows);

    if (engine.databaseType === 'dbA') await failsOnAMissingBucket(composeId);

    // The stack goes with its volume.
    await ok('compose.delete', { composeId, deleteVolumes: true });
    await waitFor(async () => (await call('compose.one', { composeId })).status === 404, { timeoutMs: 60_000, intervalMs: 250, what: `${appName} to be deleted (agent output: ${agentTail()})` });
    expect((await docker(['volume', 'ls', '-q', '--filter', `label=com.docker.compose.project=${appName}`])).out).toBe('');
  }, 300_000);
});

/** The stack's containers with their ids and states (the uptime left out). */
const stackContainers = async (appName: string) =>
  (await docker(['ps', '-a', '--filter', `label=com.docker.compose.project=${appName}`, '--format', '{{.ID}} {{.State}} {{.Status}}'])).out.replace(/Up .*/g, 'Up');

/** backup.verify of `backupId`: what it queued, and its record once it ended; the stack's containers keep their ids and states. */
async function verification(appName: string, backupId: string) {
  const before = await stackContainers(appName);
  const queued = await ok('backup.verify', { backupId });
  const ended = await waitFor(
    async () => {
      const v = await ok('backup.oneVerification', { verificationId: queued.verificationId });
      return v.status === 'running' ? null : v;
    },
    { timeoutMs: 120_000, intervalMs: 250, what: `the verification to end (agent output: ${agentTail()})` },
  );
  expect(await stackContainers(appName)).toBe(before);
  expect((await docker(['ps', '-aq', '--filter', `name=skiff-verify-${queued.commandId}`])).out).toBe('');
  return { queued, ended };
}

/**
 * backup.verify of the compose backup: its file restores in a throw-away container of the
 * image the stack's service runs, reporting the table and its rows.
 */
async function verifiesBesideTheStack(appName: string, backupId: string, key: string, table: string) {
  const { queued, ended } = await verification(appName, backupId);
  expect(queued).toMatchObject({ status: 'queued', key });
  expect(ended, JSON.stringify(ended)).toMatchObject({ status: 'done', tables: [{ name: table, rows: 3 }], error: null });
}

/** A newest file in the backup's folder that is not a dump (put there through S3): its verification fails with mariadb's reason. */
async function failsOnANewestFileThatIsNoDump(appName: string, backupId: string, key: string) {
  const newest = key.replace(/\/[^/]+$/, '/2999-01-01T00-00-00-000Z.sql.gz');
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: newest, Body: gzipSync('this is not a dump;\n') }));
  const { queued, ended } = await verification(appName, backupId);
  expect(queued.key).toBe(newest);
  expect(ended, JSON.stringify(ended)).toMatchObject({ status: 'error', tables: null, error: expect.stringMatching(/^the file does not restore: mariadb exited with 1: .*ERROR 1064 \(42000\) at line 1: You have an error in your SQL syntax/s) });
  const event = (await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find(
    (e) => (e.summary as { verificationId?: string }).verificationId === queued.verificationId,
  );
  expect(event).toMatchObject({ outcome: 'failure', summary: { verify: true, backupId, key: newest } });
}

/** A PostgreSQL (dbA) backup of the stack's MariaDB service: its verification names the PostgreSQL tools mariadb:11 lacks. */
async function refusesAPostgresBackupOfMariaDB(appName: string, composeId: string, destinationId: string) {
  const backup = await ok('backup.create', {
    schedule: '0 3 * * *', prefix: `mismatch-${s.run}/`, destinationId, database: 'shop', databaseType: 'dbA',
    backupType: 'compose', composeId, serviceName: 'db', keepLatestCount: null,
  });
  await s3.put(BUCKET, `mismatch-${s.run}/${backup.backupId}/2026-12-07T03-00-00-000Z.dump.gz`, 'a PostgreSQL dump');
  const { ended } = await verification(appName, backup.backupId);
  expect(ended, JSON.stringify(ended)).toMatchObject({
    status: 'error',
    tables: null,
    error: `the image mariadb:11 of ${appName} service db has no pg_isready, pg_restore, psql: it is not a PostgreSQL image, and the backup’s databaseType says its files are PostgreSQL dumps`,
  });
}

/** A compose backup to a bucket that does not exist fails with S3's error, in the answer and in its event. */
async function failsOnAMissingBucket(composeId: string) {
  const wrong = await ok('destination.create', { name: `wrong-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: 'no-such-bucket', accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
  const failing = await ok('backup.create', {
    schedule: '0 3 * * *',
    prefix: `wrong-${s.run}/`,
    destinationId: wrong.destinationId,
    database: 'shop',
    databaseType: 'dbA',
    backupType: 'compose',
    composeId,
    serviceName: 'db',
    keepLatestCount: null,
  });
  const res = await call('backup.manualBackupCompose', { backupId: failing.backupId });
  expect(res.status).toBe(500);
  expect(res.body.message).toMatch(/NoSuchBucket/);
  const failed = (await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find(
    (e) => (e.summary as { backupId?: string }).backupId === failing.backupId,
  );
  expect(failed?.outcome).toBe('failure');
  expect(String((failed?.summary as { error?: string }).error)).toMatch(/NoSuchBucket/);
}
