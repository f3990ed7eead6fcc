// volumeBackup.* and stale-backup alerts on a real Postgres and S3 server, without an agent
// (its results are applied as its reports would): the refusals (each naming its field,
// queuing nothing), the BackupVolume and RestoreVolume commands (S3 keys sealed with the row),
// a run's event and last success, a restore's record; and a schedule that has not succeeded
// within twice its interval alerting once per lapse. The archive itself runs in
// volumes.e2e.test.ts and the agent's volume-backups.int.test.ts.
import { Command, CommandStatus } from '@skiff/proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { TestPlatform } from '../../testing/harness.js';
import { waitFor } from '@skiff/testing';
import { S3_ACCESS_KEY } from '../../testing/s3-server.js';
import { type BackupFixtureS3, backupFixture } from './backup-fixture.js';

const BUCKET = 'skiff-volumes';
const SECRET = 'volume-secret-key-0001';
let now = new Date('2026-12-07T21:00:30Z');
const platform = { clock: () => now, backups: { dumpPollMs: 20 } };
const { ready, ok, bad, commandCount } = backupFixture({ bucket: BUCKET, secret: SECRET, project: 'volumes', platform });
let t: TestPlatform;
let s3: BackupFixtureS3;
let env: string;
beforeAll(() => void ({ t, s3, env } = ready));
const reports = () => new DeploymentReports({ db: t.db, clock: () => new Date() });
/** The one command of `kind` queued after `after` commands, once it is there. */
const queuedCommand = async (kind: string, after: number) =>
  waitFor(async () => ((await commandCount()) > after ? (await t.db.selectFrom('commands').selectAll().where('kind', '=', kind).orderBy('position', 'desc').execute())[0] : undefined), {
    what: `a ${kind} command`,
  });
const eventsOf = async (kind: string, id: string) =>
  (await t.db.selectFrom('events').selectAll().where('kind', '=', kind).orderBy('id').execute()).filter((e) => [(e.summary as any).backupId, (e.summary as any).volumeBackupId].includes(id));

describe('volume backups', () => {
  it('refuses bad input naming the field, runs through the agent, and restores into a volume of the application', async () => {
    const app = await ok('application.create', { name: 'notes', environmentId: env });
    await ok('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: 'notes-data', mountPath: '/data' });
    await ok('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: 'notes-spare', mountPath: '/spare' });
    const destination = await ok('destination.create', { name: 'local', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const input = { applicationId: app.applicationId, volumeName: 'notes-data', destinationId: destination.destinationId, schedule: '0 3 * * *', prefix: 'vol/' };
    await bad('volumeBackup.create', { ...input, volumeName: 'not-mounted' }, 'volumeName');
    await bad('volumeBackup.create', { ...input, schedule: 'often' }, 'schedule');
    await bad('volumeBackup.create', { ...input, prefix: 'a/../b' }, 'prefix');
    await bad('volumeBackup.create', { ...input, destinationId: 'dst_nope' }, 'destinationId');
    expect((await t.call('volumeBackup.create', { ...input, applicationId: 'app_nope' })).status).toBe(404);
    const backup = await ok('volumeBackup.create', input);
    expect(backup).toMatchObject({ volumeBackupId: expect.stringMatching(/^vbk_/), volumeName: 'notes-data', prefix: 'vol/', enabled: true, lastSuccessAt: null });
    expect(await ok('volumeBackup.one', { volumeBackupId: backup.volumeBackupId })).toEqual(backup);

    // A run: the agent's failure is the run's answer and its event.
    let before = await commandCount();
    const failing = t.call('volumeBackup.manualBackup', { volumeBackupId: backup.volumeBackupId });
    const first = await queuedCommand('COMMAND_KIND_BACKUP_VOLUME', before);
    expect(first.workloadKey).toBe(`application:${app.applicationId}`);
    expect(first.payload).not.toContain(SECRET);
    const sent = Command.decode(new CommandOutbox(t.platform.secrets).open(first.payload));
    expect(sent.payload?.$case === 'backupVolume' && sent.payload.value).toMatchObject({
      target: { volumeName: 'notes-data', workload: { id: app.applicationId, appName: app.appName } },
      object: { endpoint: s3.endpoint, bucket: BUCKET, key: `vol/${backup.volumeBackupId}/2026-12-07T21-00-30-000Z.tar.gz`, secretKey: SECRET },
    });
    await reports().applyCommandResult('local', { commandId: first.id, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the volume notes-data does not exist on this server', finishedAt: undefined });
    const failed = await failing;
    expect(failed.status).toBe(500);
    expect(failed.body.message).toContain('the volume notes-data does not exist');
    expect((await eventsOf('volumeBackup', backup.volumeBackupId)).map((e) => e.outcome)).toEqual(['failure']);

    // Its success records its last success and a success event.
    now = new Date('2026-12-07T21:01:30Z');
    before = await commandCount();
    const running = t.call('volumeBackup.manualBackup', { volumeBackupId: backup.volumeBackupId });
    const second = await queuedCommand('COMMAND_KIND_BACKUP_VOLUME', before);
    await reports().applyCommandResult('local', { commandId: second.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
    expect((await running).body).toMatchObject({ volumeBackupId: backup.volumeBackupId, files: [`vol/${backup.volumeBackupId}/2026-12-07T21-01-30-000Z.tar.gz`] });
    expect((await ok('volumeBackup.one', { volumeBackupId: backup.volumeBackupId })).lastSuccessAt).toBe('2026-12-07T21:01:30.000Z');
    expect((await eventsOf('volumeBackup', backup.volumeBackupId)).map((e) => e.outcome)).toEqual(['failure', 'success']);

    // Restores: a file of this backup, into a volume of the application.
    const key = `vol/${backup.volumeBackupId}/2026-12-07T21-01-30-000Z.tar.gz`;
    before = await commandCount();
    await bad('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key: 'vol/other/x.tar.gz' }, 'key');
    await bad('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key, volumeName: 'elsewhere' }, 'volumeName');
    expect(await commandCount()).toBe(before);
    const restore = await ok('volumeBackup.restore', { volumeBackupId: backup.volumeBackupId, key, volumeName: 'notes-spare', force: true });
    expect(restore).toMatchObject({ restoreId: expect.stringMatching(/^vrs_/), status: 'running', volumeName: 'notes-spare', key });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', restore.commandId).executeTakeFirstOrThrow();
    const restoreCommand = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(restoreCommand.payload?.$case === 'restoreVolume' && restoreCommand.payload.value).toMatchObject({ force: true, target: { volumeName: 'notes-spare' }, object: { key } });
    await reports().applyCommandResult('local', { commandId: restore.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the volume notes-spare is mounted by running containers (notes.1)', finishedAt: undefined });
    expect(await ok('volumeBackup.oneRestore', { restoreId: restore.restoreId })).toMatchObject({ status: 'error', log: expect.stringContaining('mounted by running containers') });
    expect((await t.call('volumeBackup.oneRestore', { restoreId: 'vrs_nope' })).status).toBe(404);

    expect(await ok('volumeBackup.remove', { volumeBackupId: backup.volumeBackupId })).toMatchObject({ volumeBackupId: backup.volumeBackupId });
    expect((await t.call('volumeBackup.one', { volumeBackupId: backup.volumeBackupId })).status).toBe(404);
  });
});

describe('encrypted destinations', () => {
  it('keep their passphrase sealed and write-only, and send it with each archive, named .age', async () => {
    const PASSPHRASE = t.watch.secret('a long passphrase for the volumes');
    const fields = { name: 'sealed', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET };
    await bad('destination.create', { ...fields, encryptionPassphrase: 'too short' }, 'encryptionPassphrase');
    const plain = await ok('destination.create', fields);
    expect(plain.hasEncryptionPassphrase).toBe(false);
    const destination = await ok('destination.update', { destinationId: plain.destinationId, encryptionPassphrase: PASSPHRASE });
    expect(destination.hasEncryptionPassphrase).toBe(true);
    expect(JSON.stringify(await ok('destination.one', { destinationId: plain.destinationId }))).not.toContain(PASSPHRASE);
    const column = (await t.db.selectFrom('destinations').select('encryptionPassphrase').where('id', '=', plain.destinationId).executeTakeFirstOrThrow()).encryptionPassphrase;
    expect(column).not.toContain(PASSPHRASE);

    const app = await ok('application.create', { name: 'sealed', environmentId: env });
    await ok('mounts.create', { applicationId: app.applicationId, type: 'volume', volumeName: 'sealed-data', mountPath: '/data' });
    const backup = await ok('volumeBackup.create', { applicationId: app.applicationId, volumeName: 'sealed-data', destinationId: plain.destinationId, schedule: '0 3 * * *', prefix: 'sealed/' });
    const before = await commandCount();
    const running = t.call('volumeBackup.manualBackup', { volumeBackupId: backup.volumeBackupId });
    const row = await queuedCommand('COMMAND_KIND_BACKUP_VOLUME', before);
    expect(row.payload).not.toContain(PASSPHRASE);
    const sent = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    const object = sent.payload?.$case === 'backupVolume' ? sent.payload.value.object : undefined;
    expect(object).toMatchObject({ passphrase: PASSPHRASE, key: expect.stringMatching(/\.tar\.gz\.age$/) });
    await reports().applyCommandResult('local', { commandId: row.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
    expect((await running).body.files).toEqual([object!.key]);

    // Removed (null): later archives are plain again.
    expect((await ok('destination.update', { destinationId: plain.destinationId, encryptionPassphrase: null })).hasEncryptionPassphrase).toBe(false);
    // A destination a volume backup writes to stays.
    await bad('destination.remove', { destinationId: plain.destinationId }, 'destinationId');
    await ok('volumeBackup.remove', { volumeBackupId: backup.volumeBackupId });
    await ok('destination.remove', { destinationId: plain.destinationId });
  });
});

describe('stale backups', () => {
  it('alert once when a schedule has not succeeded within twice its interval, and again after a new lapse', async () => {
    now = new Date('2026-12-07T22:00:30Z');
    // Never deployed: each run fails at once (its database is not running).
    const pg = await ok('dbA.create', { name: 'stale', environmentId: env });
    const destination = await ok('destination.create', { name: 'stale', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '* * * * *', prefix: 'stale/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: pg.dbAId, keepLatestCount: null });
    await t.db.updateTable('backups').set({ createdAt: now } as never).where('id', '=', backup.backupId).execute();
    const stale = async () => (await eventsOf('databaseBackup', backup.backupId)).filter((e) => (e.summary as any).stale === true);

    for (const at of ['22:01:30', '22:02:10']) {
      now = new Date(`2026-12-07T${at}Z`);
      await t.platform.backups.scheduler.tick();
    }
    expect(await stale()).toEqual([]);
    // More than two minutes (twice its one-minute interval) without a success.
    for (const at of ['22:03:10', '22:04:10', '22:05:10']) {
      now = new Date(`2026-12-07T${at}Z`);
      await t.platform.backups.scheduler.tick();
    }
    const alerts = await stale();
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ outcome: 'failure', summary: { backupId: backup.backupId, lastSuccessAt: null, error: expect.stringContaining('no successful run since it was created') } });

    // A success ends the lapse (as the runner records it); the next lapse alerts again.
    await t.db.updateTable('backups').set({ lastSuccessAt: now, staleAlertedAt: null }).where('id', '=', backup.backupId).execute();
    now = new Date('2026-12-07T22:06:10Z');
    await t.platform.backups.scheduler.tick();
    expect(await stale()).toHaveLength(1);
    for (const at of ['22:08:20', '22:09:10']) {
      now = new Date(`2026-12-07T${at}Z`);
      await t.platform.backups.scheduler.tick();
    }
    expect(await stale()).toHaveLength(2);
    expect((await stale())[1]!.summary).toMatchObject({ lastSuccessAt: '2026-12-07T22:05:10.000Z' });
    await ok('backup.remove', { backupId: backup.backupId });
  });
});
