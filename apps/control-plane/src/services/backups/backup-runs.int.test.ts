import { randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, createGzip } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { ageDecrypt } from '../../testing/age-decrypt.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from '../../testing/s3-server.js';
import { openBucket } from './s3.js';
import { BackupScheduler } from './scheduler.js';

let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
let now = new Date('2026-12-05T17:00:30Z');
const secretKey = randomBytes(32);
const BUCKET = 'skiff-backups';

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  t = await startTestPlatform({ clock: () => now, secretKey });
});
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

const ok = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const fields = (overrides: Record<string, unknown> = {}) => ({
  name: 'local',
  endpoint: s3.endpoint,
  region: 'us-east-1',
  bucket: BUCKET,
  accessKey: S3_ACCESS_KEY,
  secretKey: S3_SECRET_KEY,
  ...overrides,
});
const platformBackup = async (overrides: Record<string, unknown> = {}, destination: Record<string, unknown> = {}) => {
  const d = ok(await t.call('destination.create', fields(destination)));
  const b = ok(
    await t.call('backup.create', {
      schedule: '* * * * *',
      prefix: 'platform',
      destinationId: d.destinationId,
      database: 'skiff',
      databaseType: 'web-server',
      keepLatestCount: null,
      ...overrides,
    }),
  );
  // Created at the test's time (the column's default is the database's clock).
  await t.db.updateTable('backups').set({ createdAt: now } as never).where('id', '=', b.backupId).execute();
  return b;
};
const eventsOf = async (backupId: string) =>
  (await t.db.selectFrom('events').selectAll().where('kind', '=', 'platformBackup').orderBy('id').execute()).filter((e) => (e.summary as any).backupId === backupId);

describe('destination.testConnection', () => {
  it('lists, writes and removes a probe object, leaving the bucket as it was', async () => {
    const before = await s3.keys(BUCKET);
    expect(ok(await t.call('destination.testConnection', fields()))).toEqual({});
    expect(await s3.keys(BUCKET)).toEqual(before);
  });

  it('names the failing step and S3’s error code, never the secret key', async () => {
    const wrongBucket = await t.call('destination.testConnection', fields({ bucket: 'no-such-bucket' }));
    expect(wrongBucket.status).toBe(400);
    expect(wrongBucket.body.issues[0].path).toEqual(['bucket']);
    expect(wrongBucket.body.message).toMatch(/list failed: NoSuchBucket/);
    const wrongKey = await t.call('destination.testConnection', fields({ accessKey: 'NOT-A-KEY', secretKey: 'a-very-secret-key-0001' }));
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.body.issues[0].path).toEqual(['accessKey']);
    expect(wrongKey.body.message).toMatch(/list failed: InvalidAccessKeyId/);
    expect(JSON.stringify(wrongKey.body)).not.toContain('a-very-secret-key-0001');
  });

  it('refuses metadata and link-local endpoints before connecting', async () => {
    for (const endpoint of ['http://169.254.169.254', 'http://169.254.10.1:9000', 'http://[fe80::1]:9000']) {
      const res = await t.call('destination.testConnection', fields({ endpoint }));
      expect(res.status, endpoint).toBe(400);
      expect(res.body.issues[0].path).toEqual(['endpoint']);
    }
  });
});

describe('the platform backup', () => {
  it('streams a dump of the control plane’s database to S3, with the key only when asked, and records its event', async () => {
    const without = await platformBackup();
    const run = ok(await t.call('backup.manualBackupWebServer', { backupId: without.backupId }));
    expect(run.files).toEqual([`platform/${without.backupId}/2026-12-05T17-00-30-000Z.sql.gz`]);
    const sql = gunzipSync(await s3.get(BUCKET, run.files[0])).toString('utf8');
    expect(sql).toContain('CREATE TABLE public.backups');
    expect(sql).toContain(without.backupId);
    expect(run.size).toBe((await s3.get(BUCKET, run.files[0])).length);
    const [event] = await eventsOf(without.backupId);
    expect(event).toMatchObject({ outcome: 'success', organizationId: t.organizationId });
    expect(event!.summary).toMatchObject({ size: run.size, files: run.files, durationMs: expect.any(Number) });

    const withKey = await platformBackup({ includeEncryptionKey: true });
    const keyed = ok(await t.call('backup.manualBackupWebServer', { backupId: withKey.backupId }));
    expect(keyed.files).toHaveLength(2);
    expect(gunzipSync(await s3.get(BUCKET, keyed.files[1])).equals(secretKey)).toBe(true);

    const listed = ok(await t.call('backup.listBackupFiles', { destinationId: withKey.destinationId, search: `platform/${withKey.backupId}/` }));
    expect(listed.map((f: { key: string }) => f.key).sort()).toEqual([...keyed.files].sort());
    expect(listed[0]).toMatchObject({ size: expect.any(Number), lastModified: expect.any(String), name: expect.stringMatching(/^2026-12-05T17-00-30-000Z\./) });
  });

  it('encrypts the dump and the key with the destination’s passphrase, into .age files that Debian’s age -d decrypts', async () => {
    const passphrase = 'platform backup passphrase 0001';
    t.watch.secret(passphrase);
    const b = await platformBackup({ includeEncryptionKey: true }, { encryptionPassphrase: passphrase });
    const run = ok(await t.call('backup.manualBackupWebServer', { backupId: b.backupId }));
    expect(run.files).toEqual([`platform/${b.backupId}/2026-12-05T17-00-30-000Z.sql.gz.age`, `platform/${b.backupId}/2026-12-05T17-00-30-000Z.secret.key.gz.age`]);
    const sealed = await s3.get(BUCKET, run.files[0]);
    expect(sealed.subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    expect(run.size).toBe(sealed.length + (await s3.get(BUCKET, run.files[1])).length);
    const sql = await ageDecrypt(sealed, passphrase);
    expect(sql.ok, sql.err).toBe(true);
    expect(gunzipSync(sql.out).toString('utf8')).toContain('CREATE TABLE public.backups');
    const key = await ageDecrypt(await s3.get(BUCKET, run.files[1]), passphrase);
    expect(gunzipSync(key.out).equals(secretKey)).toBe(true);
    expect((await ageDecrypt(sealed, 'not the passphrase at all')).ok).toBe(false);
  });

  it('fails on a wrong bucket with S3’s error in its event and in the answer', async () => {
    const b = await platformBackup({}, { bucket: 'missing-bucket' });
    const res = await t.call('backup.manualBackupWebServer', { backupId: b.backupId });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/NoSuchBucket/);
    const [event] = await eventsOf(b.backupId);
    expect(event).toMatchObject({ outcome: 'failure' });
    expect((event!.summary as any).error).toMatch(/upload failed: NoSuchBucket/);
  });

  it('refuses a backup that is not the platform’s, naming backupId', async () => {
    const d = ok(await t.call('destination.create', fields()));
    const db = ok(await t.call('dbA.create', { name: 'db', environmentId: (await t.call('project.create', { name: 'p' })).body.environments[0].environmentId }));
    const b = ok(await t.call('backup.create', { schedule: '@daily', prefix: 'x', destinationId: d.destinationId, database: 'shop', databaseType: 'dbA', dbAId: db.dbAId }));
    const res = await t.call('backup.manualBackupWebServer', { backupId: b.backupId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0].path).toEqual(['backupId']);
    // A database backup whose service does not run is refused at once (its event says why), queuing nothing.
    const dbRun = await t.call('backup.manualBackupDbA', { backupId: b.backupId });
    expect(dbRun.status).toBe(400);
    expect(dbRun.body.issues[0]).toMatchObject({ path: ['backupId'], message: expect.stringMatching(/is not running \(idle\)/) });
    expect(await t.db.selectFrom('commands').select('id').where('workloadKey', '=', `database:${db.dbAId}`).execute()).toEqual([]);
    const event = (await t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find((e) => (e.summary as any).backupId === b.backupId);
    expect(event?.outcome).toBe('failure');
  });

  it('refuses a compose backup whose stack is not deployed at once, naming backupId, queuing nothing', async () => {
    const d = ok(await t.call('destination.create', fields()));
    const env = (await t.call('project.create', { name: 'p' })).body.environments[0].environmentId;
    const stack = ok(await t.call('compose.create', { name: 'shop', environmentId: env, sourceType: 'raw', composeType: 'container-compose' }));
    const b = ok(
      await t.call('backup.create', { schedule: '@daily', prefix: 'x', destinationId: d.destinationId, database: 'shop', databaseType: 'dbA', backupType: 'compose', composeId: stack.composeId, serviceName: 'db' }),
    );
    const res = await t.call('backup.manualBackupCompose', { backupId: b.backupId });
    expect(res.status).toBe(400);
    expect(res.body.issues[0]).toMatchObject({ path: ['backupId'], message: expect.stringMatching(/is not running \(idle\)/) });
    expect(await t.db.selectFrom('commands').select('id').where('workloadKey', '=', `compose:${stack.composeId}`).execute()).toEqual([]);
    const event = (await t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).find((e) => (e.summary as any).backupId === b.backupId);
    expect(event?.outcome).toBe('failure');
  });
});

describe('scheduled backups', () => {
  it('four scheduled runs with keepLatestCount 2 leave two files and other objects untouched', async () => {
    now = new Date('2026-12-05T18:00:10Z');
    const b = await platformBackup({ prefix: 'sched', keepLatestCount: 2 });
    const own = `sched/${b.backupId}/`;
    await s3.put(BUCKET, `${own}notes.txt`, 'mine');
    await s3.put(BUCKET, 'sched/unrelated.sql.gz', 'not a run');
    const runs: string[][] = [];
    for (let i = 1; i <= 4; i++) {
      now = new Date(Date.UTC(2026, 11, 5, 18, i, 5));
      // Two control planes' schedulers claim the same tick: exactly one runs it.
      const second = new BackupScheduler(t.db, () => now, (row) => t.platform.backups.runner.run(row), pino({ level: 'silent' }));
      const [a, c] = await Promise.all([t.platform.backups.scheduler.tick(), second.tick()]);
      runs.push([...a, ...c].filter((id) => id === b.backupId));
      // The same tick again runs nothing.
      expect(await t.platform.backups.scheduler.tick()).not.toContain(b.backupId);
    }
    expect(runs).toEqual([[b.backupId], [b.backupId], [b.backupId], [b.backupId]]);
    expect(await s3.keys(BUCKET, own)).toEqual([`${own}2026-12-05T18-03-05-000Z.sql.gz`, `${own}2026-12-05T18-04-05-000Z.sql.gz`, `${own}notes.txt`]);
    expect(await s3.keys(BUCKET, 'sched/unrelated')).toEqual(['sched/unrelated.sql.gz']);
    expect((await eventsOf(b.backupId)).map((e) => e.outcome)).toEqual(['success', 'success', 'success', 'success']);
  });

  it('catches up once after an outage, and never runs a firing from before the backup existed', async () => {
    now = new Date('2026-12-05T19:00:30Z');
    const b = await platformBackup({ prefix: 'catchup', schedule: '0 * * * *' });
    expect(await t.platform.backups.scheduler.tick()).not.toContain(b.backupId);
    now = new Date('2026-12-05T23:30:00Z');
    expect(await t.platform.backups.scheduler.tick()).toContain(b.backupId);
    expect(await t.platform.backups.scheduler.tick()).not.toContain(b.backupId);
    expect(await s3.keys(BUCKET, `catchup/${b.backupId}/`)).toEqual([`catchup/${b.backupId}/2026-12-05T23-30-00-000Z.sql.gz`]);
  });
});

describe('the upload pipeline', () => {
  it('streams 200 MiB through gzip into a multipart upload with memory bounded', async () => {
    // 200 MiB: at 1 GiB the RSS of this process, which also runs the S3 server, came to 97 MB.
    const total = 200 * 1024 * 1024;
    // Random bytes repeated every MiB: deflate's 32 KiB window cannot shrink them.
    const block = randomBytes(1024 * 1024);
    let sent = 0;
    const source = new Readable({
      read() {
        if (sent >= total) return this.push(null);
        sent += block.length;
        this.push(block);
      },
    });
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    const bucket = await openBucket({ endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY }, { allowPrivate: true });
    try {
      const body = new PassThrough();
      await Promise.all([pipeline(source, createGzip(), body), bucket.upload('big/200mib.bin.gz', body)]);
    } finally {
      clearInterval(sampler);
      bucket.close();
    }
    expect(await s3.keys(BUCKET, 'big/')).toEqual(['big/200mib.bin.gz']);
    console.log(`upload pipeline: RSS grew ${Math.round((peak - baseline) / 1048576)} MB over its baseline`);
    // Unbounded, the 200 MiB (incompressible) would be held whole; the S3 server in this same process
    // holds the parts it receives too, and its garbage is collected late on a loaded machine.
    expect(peak - baseline).toBeLessThan(150 * 1024 * 1024);
  }, 180_000);
});

describe('backup.listBackupFiles with a serverId', () => {
  it('lists the destination for a server of the organization, and answers another organization\'s server as an unknown one (BAD_REQUEST naming serverId)', async () => {
    const b = await platformBackup();
    ok(await t.call('backup.manualBackupWebServer', { backupId: b.backupId }));
    const search = `platform/${b.backupId}/`;
    const without = ok(await t.call('backup.listBackupFiles', { destinationId: b.destinationId, search }));
    expect(without).toHaveLength(1);
    const own = ok(await t.call('server.create', { name: 'lister', address: '192.0.2.51' })).serverId;
    expect(ok(await t.call('backup.listBackupFiles', { destinationId: b.destinationId, search, serverId: own }))).toEqual(without);

    const org = ok(await t.call('organization.create', { name: 'Lister elsewhere' }));
    const outsider = t.as(ok(await t.call('user.createApiKey', { name: 'o', metadata: { organizationId: org.organizationId } })).key);
    const foreign = ok(await outsider('server.create', { name: 'theirs', address: '192.0.2.52' })).serverId;
    const unknown = await t.call('backup.listBackupFiles', { destinationId: b.destinationId, search, serverId: 'srv_unknown' });
    const theirs = await t.call('backup.listBackupFiles', { destinationId: b.destinationId, search, serverId: foreign });
    for (const refused of [unknown, theirs]) {
      expect(refused.status).toBe(400);
      expect(refused.body.issues).toEqual([{ path: ['serverId'], message: 'no such server' }]);
    }
  });
});
