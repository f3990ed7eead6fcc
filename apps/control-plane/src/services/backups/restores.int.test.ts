// backup.restore and backup.oneRestore, and which backup each manualBackupDb* takes, on a
// real Postgres without an agent: the refusals (each naming its field, queuing nothing), the
// RestoreDatabase command a restore queues (its S3 keys sealed with the row), and the record
// its result ends. The restore itself runs in databases.e2e.test.ts.
import { Command, CommandKind, CommandStatus, DatabaseEngine } from '@skiff/proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { TestPlatform } from '../../testing/harness.js';
import { S3_ACCESS_KEY } from '../../testing/s3-server.js';
import { type BackupFixtureS3, backupFixture } from './backup-fixture.js';

const BUCKET = 'skiff-restores';
const SECRET = 'restore-secret-key-0001';
const { ready, ok, bad, commandCount } = backupFixture({ bucket: BUCKET, secret: SECRET, project: 'restores' });
let t: TestPlatform;
let s3: BackupFixtureS3;
let env: string;
beforeAll(() => void ({ t, s3, env } = ready));

describe('backup.restore', () => {
  it('refuses what it cannot restore, naming the field, then queues a RestoreDatabase whose result ends its record', async () => {
    const pg = await ok('dbA.create', { name: 'pg', environmentId: env });
    const other = await ok('dbA.create', { name: 'pg2', environmentId: env });
    const maria = await ok('dbB.create', { name: 'maria', environmentId: env });
    const destination = await ok('destination.create', { name: 'local', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'db/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: pg.dbAId, keepLatestCount: null });
    const key = `db/${backup.backupId}/2026-12-07T14-00-00-000Z.dump.gz`;

    // Each manual operation takes its own kind of backup.
    await bad('backup.manualBackupDbB', { backupId: backup.backupId }, 'backupId');
    await bad('backup.manualBackupCompose', { backupId: backup.backupId }, 'backupId');

    const before = await commandCount();
    await bad('backup.restore', { backupId: backup.backupId, key: 'db/another-backup/x.dump.gz', force: true }, 'key');
    await bad('backup.restore', { backupId: backup.backupId, key: `db/${backup.backupId}/`, force: true }, 'key');
    await bad('backup.restore', { backupId: backup.backupId, key, databaseId: maria.dbBId, force: true }, 'databaseId');
    // Not running (never deployed): the tool runs inside the database.
    await bad('backup.restore', { backupId: backup.backupId, key, force: true }, 'databaseId');
    await t.db.updateTable('databaseServices').set({ applicationStatus: 'done' }).where('id', 'in', [pg.dbAId, other.dbAId]).execute();
    // Running: only with force.
    await bad('backup.restore', { backupId: backup.backupId, key }, 'force');
    await bad('backup.restore', { backupId: backup.backupId, key, force: false }, 'force');
    expect(await commandCount()).toBe(before);
    expect(await t.db.selectFrom('databaseRestores').selectAll().execute()).toEqual([]);

    // Into another service of the same kind: the command names it, its database and the object.
    const queued = await ok('backup.restore', { backupId: backup.backupId, key, databaseId: other.dbAId, force: true });
    expect(queued).toMatchObject({ status: 'queued', restoreId: expect.stringMatching(/^rst_/), commandId: expect.any(String) });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'COMMAND_KIND_RESTORE_DATABASE', workloadKey: `database:${other.dbAId}` });
    expect(row.payload).not.toContain(SECRET);
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(command.kind).toBe(CommandKind.COMMAND_KIND_RESTORE_DATABASE);
    expect(command.payload?.$case === 'restoreDatabase' && command.payload.value).toMatchObject({
      target: { engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'app', serviceName: '', workload: { id: other.dbAId, appName: other.appName } },
      object: { endpoint: s3.endpoint, bucket: BUCKET, key, accessKey: S3_ACCESS_KEY, secretKey: SECRET },
    });
    expect(await ok('backup.oneRestore', { restoreId: queued.restoreId })).toMatchObject({ status: 'running', key, databaseId: other.dbAId, backupId: backup.backupId, log: null });

    // The agent's result ends the record, its reason as the log.
    const reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
    await reports.applyCommandResult('local', { commandId: queued.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the restore failed: pg_restore exited with 1: boom', finishedAt: undefined });
    expect(await ok('backup.oneRestore', { restoreId: queued.restoreId })).toMatchObject({ status: 'error', log: 'the restore failed: pg_restore exited with 1: boom', finishedAt: expect.any(String) });
    expect((await t.call('backup.oneRestore', { restoreId: 'rst_nope' })).status).toBe(404);
  });

  it('restores a compose backup into its stack’s service: running, forced, no databaseId; the record names the stack and service', async () => {
    const stack = await ok('compose.create', { name: 'shop', environmentId: env, sourceType: 'raw', composeType: 'container-compose' });
    const pg = await ok('dbA.create', { name: 'pg-beside', environmentId: env });
    const destination = await ok('destination.create', { name: 'compose-dest', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', {
      schedule: '0 3 * * *', prefix: 'cmp/', destinationId: destination.destinationId, database: 'shop', databaseType: 'dbA',
      backupType: 'compose', composeId: stack.composeId, serviceName: 'db', keepLatestCount: null,
    });
    const key = `cmp/${backup.backupId}/2026-12-07T14-00-00-000Z.dump.gz`;

    const before = await commandCount();
    await bad('backup.restore', { backupId: backup.backupId, key: 'cmp/other/x.dump.gz', force: true }, 'key');
    await bad('backup.restore', { backupId: backup.backupId, key, databaseId: pg.dbAId, force: true }, 'databaseId');
    // Not running (never deployed): the tool runs inside the stack's service.
    await bad('backup.restore', { backupId: backup.backupId, key, force: true }, 'backupId');
    await t.db.updateTable('composeStacks').set({ applicationStatus: 'done' }).where('id', '=', stack.composeId).execute();
    await bad('backup.restore', { backupId: backup.backupId, key }, 'force');
    expect(await commandCount()).toBe(before);

    const queued = await ok('backup.restore', { backupId: backup.backupId, key, force: true });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'COMMAND_KIND_RESTORE_DATABASE', workloadKey: `compose:${stack.composeId}` });
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(command.payload?.$case === 'restoreDatabase' && command.payload.value).toMatchObject({
      target: { engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'shop', serviceName: 'db', workload: { id: stack.composeId, appName: stack.appName } },
      object: { bucket: BUCKET, key },
    });
    expect(await ok('backup.oneRestore', { restoreId: queued.restoreId })).toMatchObject({ status: 'running', key, databaseId: null, composeId: stack.composeId, serviceName: 'db', log: null });

    // Its result ends the record; a success's log names the file restored.
    const reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
    await reports.applyCommandResult('local', { commandId: queued.commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
    expect(await ok('backup.oneRestore', { restoreId: queued.restoreId })).toMatchObject({ status: 'done', log: `restored ${key}`, finishedAt: expect.any(String) });
  });
});
