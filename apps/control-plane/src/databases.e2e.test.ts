// PostgreSQL and MariaDB database services end to end (testing/stack.ts: API, outbox relay,
// NATS, report server, the agent process, the swarm; the local postgres:17 and mariadb:11
// images of tools/lib/images), with an S3-compatible server in this process: created and
// deployed through the API, reached on their external port with their credentials, rows
// written, backed up to the bucket by the agent (the engine's dump in the database's
// container, gzipped, multipart), verified in a throw-away container (a corrupt file fails),
// the table dropped, the file restored, the rows back. A libSQL service (the local
// ghcr.io/tursodatabase/libsql-server of tools/lib/images/libsql) is deployed and reached on
// its HTTP API with its credentials, its rows kept in its volume across a new task, then backed
// up, verified and restored like the others (through the agent's relay).
import { execFile } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { waitFor } from '@skiff/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseVolumeName } from './services/databases/database-spec.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from './testing/s3-server.js';
import { docker, freePort, startTestStack, type TestStack } from './testing/stack.js';

const BUCKET = 'skiff-e2e-dumps';
let s: TestStack;
let s3: Awaited<ReturnType<typeof startS3>>;
const volumes: string[] = [];
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  s = await startTestStack('databases');
}, 120_000);
afterAll(async () => {
  await s?.close();
  await s3?.close();
  for (const volume of volumes) {
    await waitFor(async () => (await docker(['volume', 'rm', volume])).ok || !(await docker(['volume', 'inspect', volume])).ok, {
      timeoutMs: 30_000,
      intervalMs: 250,
      what: `volume ${volume} to be removed`,
    }).catch(() => undefined);
  }
}, 90_000);

const call = (op: string, input: Record<string, unknown>) => s.t.call(op, input);
const ok = async (op: string, input: Record<string, unknown>) => {
  const res = await call(op, input);
  expect(res.status, `${op} ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};

/** A client of the engine's image on the host's network: its output, or its error. */
const client = (argv: string[]) =>
  new Promise<{ ok: boolean; out: string }>((resolve) =>
    execFile('docker', ['run', '--rm', '--network', 'host', ...argv], (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}${err ? stderr : ''}`.trim() })),
  );

interface Engine {
  router: 'dbA' | 'dbB';
  image: string;
  extension: string;
  /** The SQL's output (tab-separated rows), on the service's external port. */
  sql(port: number, password: string, statement: string): Promise<{ ok: boolean; out: string }>;
}

const ENGINES: Record<string, Engine> = {
  PostgreSQL: {
    router: 'dbA',
    image: 'postgres:17',
    extension: 'dump.gz',
    sql: (port, password, statement) => client(['-e', `PGPASSWORD=${password}`, 'postgres:17', 'psql', '-h', '127.0.0.1', '-p', String(port), '-U', 'shop', '-d', 'shop', '-tAqc', statement]),
  },
  MariaDB: {
    router: 'dbB',
    image: 'mariadb:11',
    extension: 'sql.gz',
    sql: (port, password, statement) => client(['-e', `MYSQL_PWD=${password}`, 'mariadb:11', 'mariadb', '-h', '127.0.0.1', '-P', String(port), '-u', 'shop', '-N', '-B', 'shop', '-e', statement]),
  },
};

describe.each(Object.entries(ENGINES))('a %s database service', (label, engine) => {
  it('is deployed and reached with its credentials, backs up to S3 and restores its rows', async () => {
    const PASSWORD = `e2e-${s.run}-pw`;
    s.t.watch.secret(PASSWORD);
    const idField = `${engine.router}Id`;
    const port = await freePort();
    const created = await ok(`${engine.router}.create`, {
      name: 'orders',
      appName: `orders-${engine.router.toLowerCase()}-${s.run}`,
      environmentId: s.environmentId,
      databaseName: 'shop',
      databaseUser: 'shop',
      databasePassword: PASSWORD,
      rootPassword: engine.router === 'dbB' ? `${PASSWORD}-root` : undefined,
    });
    const id = created[idField] as string;
    const appName = created.appName as string;
    s.services.push(appName);
    volumes.push(databaseVolumeName(id));
    await ok(`${engine.router}.saveExternalPort`, { [idField]: id, externalPort: port });
    await ok(`${engine.router}.deploy`, { [idField]: id });
    await waitFor(
      async () => {
        const status = (await ok(`${engine.router}.one`, { [idField]: id })).applicationStatus;
        if (status === 'error') throw new Error(`the deploy failed (agent output: ${s.agentOutput().slice(-2000)})`);
        return status === 'done';
      },
      { timeoutMs: 180_000, intervalMs: 500, what: `the ${label} deploy to end` },
    );
    const record = await ok(`${engine.router}.one`, { [idField]: id });
    expect(record.internalConnectionUrl).toBe(`${engine.router === 'dbA' ? 'postgresql' : 'mysql'}://shop@${appName}:${engine.router === 'dbA' ? 5432 : 3306}/shop`);
    expect(record.externalPort).toBe(port);
    expect(JSON.stringify(record)).not.toContain(PASSWORD);

    // Rows written on the external port with the service's user; a wrong password is refused.
    await waitFor(async () => (await engine.sql(port, PASSWORD, 'SELECT 1')).ok, { timeoutMs: 90_000, intervalMs: 500, what: `${label} to accept connections` });
    expect((await engine.sql(port, 'not-the-password', 'SELECT 1')).ok).toBe(false);
    const write = await engine.sql(port, PASSWORD, "CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(40)); INSERT INTO items VALUES (1, 'anchor'), (2, 'buoy'), (3, 'cleat');");
    expect(write.ok, write.out).toBe(true);
    const rows = async () => (await engine.sql(port, PASSWORD, 'SELECT id, name FROM items ORDER BY id')).out;
    expect(await rows()).toBe('1\tanchor\n2\tbuoy\n3\tcleat'.replace(/\t/g, engine.router === 'dbA' ? '|' : '\t'));
    const before = await rows();

    // A manual backup: the agent dumps into the bucket; the run answers its file and size, and its event says so.
    const destination = await ok('destination.create', { name: `e2e-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
    const backup = await ok('backup.create', {
      schedule: '0 3 * * *',
      prefix: `e2e-${s.run}/`,
      destinationId: destination.destinationId,
      database: 'shop',
      databaseType: engine.router,
      [idField]: id,
      keepLatestCount: null,
    });
    const run = await ok(`backup.manualBackup${engine.router === 'dbA' ? 'DbA' : 'DbB'}`, { backupId: backup.backupId });
    expect(run.files).toHaveLength(1);
    const key = run.files[0] as string;
    expect(key.startsWith(`e2e-${s.run}/${backup.backupId}/`) && key.endsWith(`.${engine.extension}`), key).toBe(true);
    const stored = await s3.get(BUCKET, key);
    expect(run.size).toBe(stored.length);
    const dump = gunzipSync(stored);
    if (engine.router === 'dbA') expect(dump.subarray(0, 5).toString()).toBe('PGDMP');
    else expect(dump.toString()).toContain('INSERT INTO `items` VALUES');
    const listed = await ok('backup.listBackupFiles', { destinationId: destination.destinationId, search: `e2e-${s.run}/${backup.backupId}/` });
    expect(listed.map((f: { key: string }) => f.key)).toEqual([key]);
    const events = await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute();
    const event = events.find((e) => (e.summary as { backupId?: string }).backupId === backup.backupId);
    expect(event?.outcome).toBe('success');
    expect(event?.summary).toMatchObject({ files: [key], size: stored.length });

    // Verified: the newest file restores in a throw-away container of the service's image, which reports the table and its rows, then goes.
    const verification = await ok('backup.verify', { backupId: backup.backupId });
    expect(verification.key).toBe(key);
    const verified = await waitFor(
      async () => {
        const v = await ok('backup.oneVerification', { verificationId: verification.verificationId });
        return v.status === 'running' ? null : v;
      },
      { timeoutMs: 240_000, intervalMs: 500, what: () => `the ${label} verification to end (agent output: ${s.agentOutput().slice(-2000)})` },
    );
    expect(verified, JSON.stringify(verified)).toMatchObject({ status: 'done', error: null, tables: [{ name: engine.router === 'dbA' ? 'public.items' : 'items', rows: 3 }] });
    expect((await docker(['ps', '-aq', '--filter', `name=skiff-verify-${verification.commandId}`])).out).toBe('');
    if (engine.router === 'dbA') {
      // A corrupt file fails with the restore tool's reason, kept on the record and sent as a failure event.
      const corrupt = key.replace(/\/[^/]+$/, '/2999-01-01T00-00-00-000Z.dump.gz');
      await s3.put(BUCKET, corrupt, 'not a dump');
      const bad = await ok('backup.verify', { backupId: backup.backupId });
      expect(bad.key).toBe(corrupt);
      const failedVerification = await waitFor(
        async () => {
          const v = await ok('backup.oneVerification', { verificationId: bad.verificationId });
          return v.status === 'running' ? null : v;
        },
        { timeoutMs: 240_000, intervalMs: 500, what: 'the corrupt file’s verification to end' },
      );
      expect(failedVerification).toMatchObject({ status: 'error', tables: null, error: expect.stringMatching(/^the file does not restore: /) });
      const verifyEvent = (await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find(
        (e) => (e.summary as { verificationId?: string }).verificationId === bad.verificationId,
      );
      expect(verifyEvent).toMatchObject({ outcome: 'failure', summary: { verify: true, backupId: backup.backupId } });
      await s3.client.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: corrupt }));
    }

    // The table dropped; a restore without force, or of a file not of this backup, is refused and queues nothing.
    expect((await engine.sql(port, PASSWORD, 'DROP TABLE items')).ok).toBe(true);
    const commandsBefore = (await s.t.db.selectFrom('commands').select('id').execute()).length;
    const unforced = await call('backup.restore', { backupId: backup.backupId, key });
    expect(unforced.status).toBe(400);
    expect(unforced.body.issues[0].path).toEqual(['force']);
    const foreign = await call('backup.restore', { backupId: backup.backupId, key: 'elsewhere/other.dump.gz', force: true });
    expect(foreign.status).toBe(400);
    expect(foreign.body.issues[0].path).toEqual(['key']);
    expect((await s.t.db.selectFrom('commands').select('id').execute()).length).toBe(commandsBefore);

    // Restored: the rows are back, and the restore's record says it is done.
    const restore = await ok('backup.restore', { backupId: backup.backupId, key, force: true });
    const ended = await waitFor(
      async () => {
        const r = await ok('backup.oneRestore', { restoreId: restore.restoreId });
        return r.status === 'running' ? null : r;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: () => `the ${label} restore to end (agent output: ${s.agentOutput().slice(-2000)})` },
    );
    expect(ended, JSON.stringify(ended)).toMatchObject({ status: 'done', key, databaseId: id });
    expect(await rows()).toBe(before);

    if (engine.router === 'dbA') {
      // A backup to a bucket that does not exist fails with S3's error, in the answer and in its event, and stores nothing.
      const wrong = await ok('destination.create', { name: `wrong-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: 'no-such-bucket', accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
      const failing = await ok('backup.create', { schedule: '0 3 * * *', prefix: `wrong-${s.run}/`, destinationId: wrong.destinationId, database: 'shop', databaseType: 'dbA', dbAId: id, keepLatestCount: null });
      const res = await call('backup.manualBackupDbA', { backupId: failing.backupId });
      expect(res.status).toBe(500);
      expect(res.body.message).toMatch(/NoSuchBucket/);
      const failed = (await s.t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find(
        (e) => (e.summary as { backupId?: string }).backupId === failing.backupId,
      );
      expect(failed?.outcome).toBe('failure');
      expect(String((failed?.summary as { error?: string }).error)).toMatch(/NoSuchBucket/);
    }

    await ok(`${engine.router}.remove`, { [idField]: id, deleteVolume: true });
    await waitFor(async () => (await call(`${engine.router}.one`, { [idField]: id })).status === 404, { timeoutMs: 120_000, intervalMs: 500, what: `the ${label} service to be removed` });
  }, 600_000);
});

/** Hrana over HTTP (`POST /v2/pipeline`): the statements' results, or the server's status. */
const pipeline = async (port: number, auth: string | null, statements: string[]) => {
  const res = await fetch(`http://127.0.0.1:${port}/v2/pipeline`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {}) },
    body: JSON.stringify({ requests: [...statements.map((sql) => ({ type: 'execute', stmt: { sql } })), { type: 'close' }] }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = res.ok ? ((await res.json()) as { results: { type: string; response?: { result?: { rows: { value: string }[][] } } }[] }) : null;
  return { status: res.status, results: body?.results ?? [] };
};

describe('a libSQL database service', () => {
  it('is deployed and reached on its HTTP API with its credentials only, its rows kept in its volume, backed up, verified and restored', async () => {
    const PASSWORD = `e2e-${s.run}-libsql-pw`;
    s.t.watch.secret(PASSWORD);
    const port = await freePort();
    const created = await ok('dbE.create', { name: 'edge', appName: `edge-dbe-${s.run}`, environmentId: s.environmentId, databaseUser: 'shop', databasePassword: PASSWORD });
    const id = created.dbEId as string;
    const appName = created.appName as string;
    s.services.push(appName);
    volumes.push(databaseVolumeName(id));
    await ok('dbE.saveExternalPort', { dbEId: id, externalPort: port });
    await ok('dbE.deploy', { dbEId: id });
    await waitFor(
      async () => {
        const status = (await ok('dbE.one', { dbEId: id })).applicationStatus;
        if (status === 'error') throw new Error(`the deploy failed (agent output: ${s.agentOutput().slice(-2000)})`);
        return status === 'done';
      },
      { timeoutMs: 180_000, intervalMs: 500, what: 'the libSQL deploy to end' },
    );
    const record = await ok('dbE.one', { dbEId: id });
    expect(record.containerImage).toBe('ghcr.io/tursodatabase/libsql-server');
    expect(record.internalConnectionUrl).toBe(`http://shop@${appName}:8080`);
    expect(JSON.stringify(record)).not.toContain(PASSWORD);

    const CREDENTIALS = `shop:${PASSWORD}`;
    const answering = () =>
      waitFor(async () => (await pipeline(port, CREDENTIALS, ['SELECT 1']).catch(() => ({ status: 0 }))).status === 200, {
        timeoutMs: 90_000,
        intervalMs: 500,
        what: 'libSQL to answer on its external port',
      });
    await answering();
    expect((await pipeline(port, null, ['SELECT 1'])).status).toBe(401);
    expect((await pipeline(port, 'shop:not-the-password', ['SELECT 1'])).status).toBe(401);
    expect((await pipeline(port, `other:${PASSWORD}`, ['SELECT 1'])).status).toBe(401);

    const write = await pipeline(port, CREDENTIALS, ['CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)', "INSERT INTO items VALUES (1, 'anchor'), (2, 'buoy'), (3, 'cleat')"]);
    expect(write.results.map((r) => r.type), JSON.stringify(write)).toEqual(['ok', 'ok', 'ok']);
    const rows = async () => {
      const read = await pipeline(port, CREDENTIALS, ['SELECT id, name FROM items ORDER BY id']);
      return read.results[0]?.response?.result?.rows.map((row) => row.map((cell) => cell.value).join('|'));
    };
    expect(await rows()).toEqual(['1|anchor', '2|buoy', '3|cleat']);

    // The task's container runs sqld as its own user; removed, Swarm's next task finds the rows in the volume.
    const task = (await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`])).out.trim();
    expect(task).toMatch(/^[0-9a-f]+$/);
    expect((await docker(['exec', task, 'id', '-un'])).out.trim()).toBe('sqld');
    expect((await docker(['rm', '-f', task])).ok).toBe(true);
    await waitFor(async () => {
      const next = (await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${appName}`])).out.trim();
      return next !== '' && next !== task;
    }, { timeoutMs: 90_000, intervalMs: 500, what: 'a new libSQL task' });
    await answering();
    expect(await rows()).toEqual(['1|anchor', '2|buoy', '3|cleat']);

    // Backed up through the agent's relay (GET /dump), verified in a throw-away libsql-server, the table dropped, restored.
    const destination = await ok('destination.create', { name: `e2e-libsql-${s.run}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
    const backup = await ok('backup.create', {
      schedule: '0 3 * * *',
      prefix: `e2e-libsql-${s.run}/`,
      destinationId: destination.destinationId,
      database: 'edge',
      databaseType: 'dbE',
      dbEId: id,
      keepLatestCount: null,
    });
    const run = await ok('backup.manualBackupDbE', { backupId: backup.backupId });
    const key = run.files[0] as string;
    expect(key.endsWith('.sql.gz'), key).toBe(true);
    const dump = gunzipSync(await s3.get(BUCKET, key)).toString();
    expect(dump).toContain('CREATE TABLE IF NOT EXISTS items');
    expect(dump).toContain("INSERT INTO items VALUES(3,'cleat');");
    expect(dump).not.toContain(PASSWORD);
    const verification = await ok('backup.verify', { backupId: backup.backupId });
    const verified = await waitFor(
      async () => {
        const v = await ok('backup.oneVerification', { verificationId: verification.verificationId });
        return v.status === 'running' ? null : v;
      },
      { timeoutMs: 240_000, intervalMs: 500, what: () => `the libSQL verification to end (agent output: ${s.agentOutput().slice(-2000)})` },
    );
    expect(verified, JSON.stringify(verified)).toMatchObject({ status: 'done', error: null, tables: [{ name: 'items', rows: 3 }] });
    const drop = await pipeline(port, CREDENTIALS, ['DROP TABLE items', 'CREATE TABLE stray (x)']);
    expect(drop.results.map((r) => r.type)).toEqual(['ok', 'ok', 'ok']);
    const restore = await ok('backup.restore', { backupId: backup.backupId, key, force: true });
    const restored = await waitFor(
      async () => {
        const r = await ok('backup.oneRestore', { restoreId: restore.restoreId });
        return r.status === 'running' ? null : r;
      },
      { timeoutMs: 120_000, intervalMs: 500, what: () => `the libSQL restore to end (agent output: ${s.agentOutput().slice(-2000)})` },
    );
    expect(restored, JSON.stringify(restored)).toMatchObject({ status: 'done', key, databaseId: id });
    expect(await rows()).toEqual(['1|anchor', '2|buoy', '3|cleat']);
    const tables = await pipeline(port, CREDENTIALS, ["SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"]);
    expect(tables.results[0]?.response?.result?.rows.map((row) => row[0]?.value)).toEqual(['items']);
    expect((await docker(['ps', '-aq', '--filter', 'label=skiff.relay'])).out).toBe('');

    await ok('dbE.remove', { dbEId: id, deleteVolume: true });
    await waitFor(async () => (await call('dbE.one', { dbEId: id })).status === 404, { timeoutMs: 120_000, intervalMs: 500, what: 'the libSQL service to be removed' });
  }, 600_000);
});
