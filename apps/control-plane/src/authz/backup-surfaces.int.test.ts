// The database, volume and backup surfaces as another organization and a hostile user attack
// them: every id of organization A given to organization B's calls (volume backups and their
// restores, verifications, destinations, database services) answers exactly as a missing id
// does, and nothing changes; file keys outside a backup's own folder (climbing, absolute,
// URL-encoded, another backup's, very long, NUL) are BAD_REQUEST naming `key`; numbers past
// what the records hold are BAD_REQUEST naming the field; and no answer carries a secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform, type Call } from '../testing/harness.js';
import { S3_ACCESS_KEY, startS3 } from '../testing/s3-server.js';

const BUCKET = 'skiff-backup-surfaces';
const S3_SECRET = 'backup-surfaces-s3-secret-01';
const PASSPHRASE = 'backup-surfaces-passphrase-01';
const DB_PASSWORD = 'backup-surfaces-db-password-01';

let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
let outsider: Call;
const a: Record<string, string> = {};
const b: Record<string, string> = {};

const ok = async (call: Call, op: string, input?: Record<string, unknown>) => {
  const res = await call(op, input);
  if (res.status !== 200) throw new Error(`${op}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

async function populate(call: Call, into: Record<string, string>, tag: string) {
  const project = await ok(call, 'project.create', { name: `surf-${tag}` });
  const env = project.environments[0].environmentId;
  into.projectId = project.projectId;
  into.environmentId = env;
  const app = await ok(call, 'application.create', { name: `notes-${tag}`, environmentId: env });
  into.applicationId = app.applicationId;
  await ok(call, 'mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: `notes-${tag}-data`, mountPath: '/data' });
  const db = await ok(call, 'dbA.create', { name: `pg-${tag}`, environmentId: env, databasePassword: `${DB_PASSWORD}-${tag}` });
  into.dbAId = db.dbAId;
  await t.db.updateTable('databaseServices').set({ applicationStatus: 'done' }).where('id', '=', db.dbAId).execute();
  const destination = await ok(call, 'destination.create', {
    name: `s3-${tag}`, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: `${S3_SECRET}-${tag}`, encryptionPassphrase: `${PASSPHRASE}-${tag}`,
  });
  into.destinationId = destination.destinationId;
  const backup = await ok(call, 'backup.create', { schedule: '0 3 * * *', prefix: `${tag}/`, destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: db.dbAId, keepLatestCount: null });
  into.backupId = backup.backupId;
  into.key = `${tag}/${backup.backupId}/2026-12-07T14-00-00-000Z.dump.gz.age`;
  const volume = await ok(call, 'volumeBackup.create', { applicationId: app.applicationId, volumeName: `notes-${tag}-data`, destinationId: destination.destinationId, schedule: '0 3 * * *', prefix: `v${tag}/` });
  into.volumeBackupId = volume.volumeBackupId;
  into.volumeKey = `v${tag}/${volume.volumeBackupId}/2026-12-07T14-00-00-000Z.tar.gz.age`;
  into.volumeRestoreId = (await ok(call, 'volumeBackup.restore', { volumeBackupId: volume.volumeBackupId, key: into.volumeKey })).restoreId;
  into.verificationId = `vrf_surf_${tag}`;
  await t.db
    .insertInto('backupVerifications')
    .values({ id: into.verificationId, organizationId: backup.organizationId, backupId: backup.backupId, objectKey: into.key, commandId: `cmd_surf_${tag}`, trigger: 'manual', status: 'running' })
    .execute();
}

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  t = await startTestPlatform();
  for (const s of [S3_SECRET, PASSPHRASE, DB_PASSWORD]) t.watch.secret(s);
  const other = await ok(t.call, 'organization.create', { name: 'Organization B' });
  const key = (await ok(t.call, 'user.createApiKey', { name: 'b', metadata: { organizationId: other.organizationId } })).key;
  outsider = t.as(t.watch.secret(key));
  await populate(t.call, a, 'a');
  await populate(outsider, b, 'b');
}, 60_000);
afterAll(async () => {
  await t?.close();
  await s3?.close();
});

async function sameAsMissing(op: string, input: (id: string) => Record<string, unknown>, id: string, missing: string) {
  const theirs = await outsider(op, input(id));
  const none = await outsider(op, input(missing));
  expect(theirs.status, `${op} ${JSON.stringify(theirs.body)}`).toBeGreaterThanOrEqual(400);
  expect(theirs.status, `${op} ${JSON.stringify(theirs.body)}`).toBeLessThan(500);
  expect({ status: theirs.status, code: theirs.body.code, message: theirs.body.message, issues: theirs.body.issues }, op).toEqual({
    status: none.status, code: none.body.code, message: none.body.message, issues: none.body.issues,
  });
  return theirs;
}

const snapshot = async () => ({
  databases: await t.db.selectFrom('databaseServices').selectAll().orderBy('id').execute(),
  destinations: await t.db.selectFrom('destinations').selectAll().orderBy('id').execute(),
  backups: await t.db.selectFrom('backups').selectAll().orderBy('id').execute(),
  volumeBackups: await t.db.selectFrom('volumeBackups').selectAll().orderBy('id').execute(),
  volumeRestores: await t.db.selectFrom('volumeRestores').selectAll().orderBy('id').execute(),
  restores: await t.db.selectFrom('databaseRestores').selectAll().orderBy('id').execute(),
  verifications: await t.db.selectFrom('backupVerifications').selectAll().orderBy('id').execute(),
  mounts: await t.db.selectFrom('applicationMounts').selectAll().orderBy('id').execute(),
  commands: (await t.db.selectFrom('commands').select('id').execute()).length,
});

describe('another organization on the database, volume and backup surfaces', () => {
  it('reaches none of A\u2019s records through the id an operation is about', async () => {
    const before = await snapshot();
    const cases: Array<[string, (id: string) => Record<string, unknown>, string]> = [
      ['volumeBackup.one', (id) => ({ volumeBackupId: id }), a.volumeBackupId!],
      ['volumeBackup.remove', (id) => ({ volumeBackupId: id }), a.volumeBackupId!],
      ['volumeBackup.manualBackup', (id) => ({ volumeBackupId: id }), a.volumeBackupId!],
      ['volumeBackup.restore', (id) => ({ volumeBackupId: id, key: a.volumeKey, force: true }), a.volumeBackupId!],
      ['volumeBackup.oneRestore', (id) => ({ restoreId: id }), a.volumeRestoreId!],
      ['volumeBackup.create', (id) => ({ applicationId: id, volumeName: 'notes-a-data', destinationId: b.destinationId, schedule: '0 3 * * *', prefix: 'x/' }), a.applicationId!],
      ['backup.verify', (id) => ({ backupId: id }), a.backupId!],
      ['backup.verifications', (id) => ({ backupId: id }), a.backupId!],
      ['backup.oneVerification', (id) => ({ verificationId: id }), a.verificationId!],
      ['backup.update', (id) => ({ backupId: id, destinationId: b.destinationId, schedule: '0 3 * * *', enabled: true, prefix: 'b/', database: 'app', keepLatestCount: null, serviceName: null, metadata: null, databaseType: 'dbA' }), a.backupId!],
      ['backup.remove', (id) => ({ backupId: id }), a.backupId!],
      ['destination.update', (id) => ({ destinationId: id, name: 'stolen', endpoint: 'https://s3.example.com' }), a.destinationId!],
      ['dbA.one', (id) => ({ dbAId: id }), a.dbAId!],
      ['dbA.update', (id) => ({ dbAId: id, name: 'stolen' }), a.dbAId!],
      ['dbA.stop', (id) => ({ dbAId: id }), a.dbAId!],
      ['dbA.saveEnvironment', (id) => ({ dbAId: id, env: 'X=1' }), a.dbAId!],
      ['dbA.saveExternalPort', (id) => ({ dbAId: id, externalPort: 15432 }), a.dbAId!],
      ['dbA.move', (id) => ({ dbAId: id, targetEnvironmentId: b.environmentId }), a.dbAId!],
      ['dbA.remove', (id) => ({ dbAId: id, deleteVolume: true }), a.dbAId!],
    ];
    for (const [op, input, id] of cases) {
      const answer = await sameAsMissing(op, input, id, `${id.split('_')[0]}_missing0000`);
      expect(answer.status, op).toBe(404);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses A\u2019s records named in B\u2019s calls as missing ones, naming the field', async () => {
    const before = await snapshot();
    const cases: Array<[string, (id: string) => Record<string, unknown>, string, string]> = [
      ['volumeBackup.create', (id) => ({ applicationId: b.applicationId, volumeName: 'notes-b-data', destinationId: id, schedule: '0 3 * * *', prefix: 'x/' }), a.destinationId!, 'destinationId'],
      ['dbA.move', (id) => ({ dbAId: b.dbAId, targetEnvironmentId: id }), a.environmentId!, 'targetEnvironmentId'],
      // A's volume file restored into B's application, and A's volume name on B's backup.
      ['volumeBackup.restore', (key) => ({ volumeBackupId: b.volumeBackupId, key, force: true }), a.volumeKey!, 'key'],
      ['volumeBackup.restore', (volumeName) => ({ volumeBackupId: b.volumeBackupId, key: b.volumeKey, volumeName, force: true }), 'notes-a-data', 'volumeName'],
      ['backup.verify', (key) => ({ backupId: b.backupId, key }), a.key!, 'key'],
    ];
    for (const [op, input, id, field] of cases) {
      const missing = field === 'key' ? `b/${b.backupId}/../../a/x.gz` : field === 'volumeName' ? 'never-mounted' : `${id.split('_')[0]}_missing0000`;
      const answer = await sameAsMissing(op, input, id, missing);
      expect(answer.status, op).toBe(400);
      expect(answer.body.issues.map((i: { path: string[] }) => i.path[0]), op).toEqual([field]);
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('a hostile user of their own organization', () => {
  it('names no file outside the backup\u2019s own folder', async () => {
    const before = await snapshot();
    const own = `a/${a.backupId}/`;
    const volumeOwn = `va/${a.volumeBackupId}/`;
    const hostile = (folder: string) => [
      `${folder}../${b.backupId}/x.dump.gz`,
      `${folder}..%2f..%2fb/x.dump.gz`,
      `${folder}%2e%2e/x.dump.gz`,
      `/${folder}x.dump.gz`,
      `/etc/passwd`,
      `${folder}`,
      `${folder}sub/x.dump.gz`,
      `${folder}x\u0000.dump.gz`,
      `${folder}${'x'.repeat(5000)}`,
      `b/${b.backupId}/2026-12-07T14-00-00-000Z.dump.gz.age`,
      `a/${a.backupId}x/2026-12-07T14-00-00-000Z.dump.gz`,
    ];
    for (const key of hostile(own)) {
      for (const [op, input] of [
        ['backup.restore', { backupId: a.backupId, key, force: true }],
        ['backup.verify', { backupId: a.backupId, key }],
      ] as const) {
        const r = await t.call(op, input);
        expect(r.status, `${op} ${JSON.stringify(key).slice(0, 80)} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(400);
        expect(r.body.issues.map((i: { path: string[] }) => i.path[0])).toEqual(['key']);
      }
    }
    for (const key of hostile(volumeOwn)) {
      const r = await t.call('volumeBackup.restore', { volumeBackupId: a.volumeBackupId, key, force: true });
      expect(r.status, `${JSON.stringify(key).slice(0, 80)} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(400);
      expect(r.body.issues.map((i: { path: string[] }) => i.path[0])).toEqual(['key']);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses retention counts the records cannot hold, naming keepLatestCount', async () => {
    const before = await snapshot();
    const huge = 2 ** 31;
    const cases: Array<[string, Record<string, unknown>]> = [
      ['backup.create', { schedule: '0 3 * * *', prefix: 'h/', destinationId: a.destinationId, database: 'app', databaseType: 'dbA', dbAId: a.dbAId, keepLatestCount: huge }],
      ['backup.update', { backupId: a.backupId, destinationId: a.destinationId, schedule: '0 3 * * *', enabled: true, prefix: 'a/', database: 'app', keepLatestCount: huge, serviceName: null, metadata: null, databaseType: 'dbA' }],
      ['volumeBackup.create', { applicationId: a.applicationId, volumeName: 'notes-a-data', destinationId: a.destinationId, schedule: '0 3 * * *', prefix: 'h/', keepLatestCount: huge }],
    ];
    for (const [op, input] of cases) {
      const r = await t.call(op, input);
      expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.issues.map((i: { path: string[] }) => i.path[0])).toEqual(['keepLatestCount']);
    }
    expect((await t.call('backup.create', { ...cases[0]![1], keepLatestCount: 2 ** 31 - 1 })).status).toBe(200);
    expect((await snapshot()).volumeBackups).toEqual(before.volumeBackups);
  });

  it('lists a destination\u2019s files to a member only inside the folders of backups they may see', async () => {
    const otherEnv = (await ok(t.call, 'project.create', { name: 'surf-a-other' })).environments[0].environmentId;
    const otherDb = await ok(t.call, 'dbA.create', { name: 'pg-a-other', environmentId: otherEnv });
    const hidden = await ok(t.call, 'backup.create', { schedule: '0 3 * * *', prefix: 'hidden/', destinationId: a.destinationId, database: 'app', databaseType: 'dbA', dbAId: otherDb.dbAId, keepLatestCount: null });
    const limited = t.as(t.watch.secret((await ok(t.call, 'user.createApiKey', { name: 'one-project', scope: { projectIds: [a.projectId] } })).key));
    const list = (call: Call, search: string) => call('backup.listBackupFiles', { destinationId: a.destinationId, search });
    expect((await list(limited, `a/${a.backupId}/`)).status).toBe(200);
    expect((await list(limited, `va/${a.volumeBackupId}/2026`)).status).toBe(200);
    for (const search of ['', 'a/', `hidden/${hidden.backupId}/`, `a/${a.backupId}`, `b/${b.backupId}/`]) {
      const r = await list(limited, search);
      expect(r.status, `${search} ${JSON.stringify(r.body)}`).toBe(403);
    }
    expect((await list(t.call, '')).status).toBe(200);
  });

  it('refuses schedules too long to parse at every tick, naming schedule', async () => {
    const before = await snapshot();
    const long = `${Array.from({ length: 600 }, () => '5').join(',')} 3 * * *`;
    for (const [op, input] of [
      ['backup.create', { schedule: long, prefix: 'h/', destinationId: a.destinationId, database: 'app', databaseType: 'dbA', dbAId: a.dbAId }],
      ['volumeBackup.create', { applicationId: a.applicationId, volumeName: 'notes-a-data', destinationId: a.destinationId, schedule: long, prefix: 'h/' }],
    ] as const) {
      const r = await t.call(op, input);
      expect(r.status, `${op} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(400);
      expect(r.body.issues.map((i: { path: string[] }) => i.path[0])).toEqual(['schedule']);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('answers no secret: passwords, keys and passphrases only as has\u2026 flags', async () => {
    const answers = [
      await ok(t.call, 'dbA.one', { dbAId: a.dbAId }),
      await ok(t.call, 'destination.one', { destinationId: a.destinationId }),
      await ok(t.call, 'destination.all'),
      await ok(t.call, 'backup.one', { backupId: a.backupId }),
      await ok(t.call, 'volumeBackup.one', { volumeBackupId: a.volumeBackupId }),
      await ok(t.call, 'volumeBackup.oneRestore', { restoreId: a.volumeRestoreId }),
      await ok(t.call, 'backup.verifications', { backupId: a.backupId }),
      await ok(t.call, 'user.getBackups'),
      (await t.call('backup.restore', { backupId: a.backupId, key: a.key })).body,
    ];
    const text = JSON.stringify(answers);
    for (const secret of [S3_SECRET, PASSPHRASE, DB_PASSWORD]) expect(text).not.toContain(secret);
    expect(answers[0]).toMatchObject({ hasDatabasePassword: true });
    expect(answers[1]).toMatchObject({ hasSecretKey: true, hasEncryptionPassphrase: true });
    const events = JSON.stringify(await t.db.selectFrom('events').selectAll().execute());
    const audit = JSON.stringify(await t.db.selectFrom('auditEvents').selectAll().execute());
    for (const secret of [S3_SECRET, PASSPHRASE, DB_PASSWORD]) {
      expect(events).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
  });
});
