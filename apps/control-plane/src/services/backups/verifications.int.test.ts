// backup.verify, backup.oneVerification and backup.verifications on a real Postgres and an
// S3-compatible server, without an agent: the refusals (each naming its field, queuing
// nothing), the VerifyDatabase command a verification queues (the newest file, the service's
// image), the record its result ends (tables and row counts, or the error with a
// `databaseBackup` failure event, `verify: true`), and the verification that follows a
// scheduled run; the same for a database inside a compose stack (its service's image is read
// by the agent, so the command names none), each engine taken from the backup's databaseType
// (the agent refuses an image without that engine's tools). The verification itself runs in apps/agent/src/handlers/verify-database.int.test.ts
// and databases.e2e.test.ts. libSQL backups are run, restored and verified the same way (the commands name the LIBSQL engine).
import { Command, CommandKind, CommandStatus, DatabaseEngine, WorkloadKind } from '@skiff/proto';
import { waitFor } from '@skiff/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { DeploymentReports } from '../../agents/inbound/deployment-reports.js';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { TestPlatform } from '../../testing/harness.js';
import { S3_ACCESS_KEY } from '../../testing/s3-server.js';
import { type BackupFixtureS3, backupFixture } from './backup-fixture.js';

const BUCKET = 'skiff-verifications';
const SECRET = 'verify-secret-key-0001';
const { ready, ok, bad, commandCount } = backupFixture({ bucket: BUCKET, secret: SECRET, project: 'verifications' });
let t: TestPlatform;
let s3: BackupFixtureS3;
let env: string;
beforeAll(() => void ({ t, s3, env } = ready));
const verifyEvents = async (backupId: string) =>
  (await t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').execute()).filter((e) => (e.summary as any).backupId === backupId && (e.summary as any).verify);

describe('backup.verify', () => {
  it('refuses what it cannot verify, then queues a VerifyDatabase of the newest file whose result ends its record', async () => {
    const pg = await ok('dbA.create', { name: 'pg', environmentId: env });
    const mongo = await ok('dbD.create', { name: 'mongo', environmentId: env });
    const destination = await ok('destination.create', { name: 'local', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'db/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: pg.dbAId, keepLatestCount: null });
    const mongoBackup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'db/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbD', dbDId: mongo.dbDId, keepLatestCount: null });
    const own = `db/${backup.backupId}/`;

    const before = await commandCount();
    await bad('backup.verify', { backupId: backup.backupId }, 'backupId', /no file yet/);
    await s3.put(BUCKET, `${own}2026-12-07T01-00-00-000Z.dump.gz`, 'old');
    await s3.put(BUCKET, `${own}2026-12-07T03-00-00-000Z.dump.gz`, 'new');
    await s3.put(BUCKET, `${own}notes.txt`, 'not a run');
    await bad('backup.verify', { backupId: backup.backupId, key: 'db/another/2026-12-07T03-00-00-000Z.dump.gz' }, 'key');
    await bad('backup.verify', { backupId: backup.backupId, key: `${own}2026-12-01T00-00-00-000Z.dump.gz` }, 'key', /no such file/);
    await bad('backup.verify', { backupId: mongoBackup.backupId }, 'backupId', /no file yet/);
    await bad('backup.verify', { backupId: backup.backupId, bogus: 1 }, 'bogus');
    expect(await commandCount()).toBe(before);
    expect(await t.db.selectFrom('backupVerifications').selectAll().execute()).toEqual([]);

    // The database need not run (it is not touched); the newest file is the default.
    const queued = await ok('backup.verify', { backupId: backup.backupId });
    expect(queued).toMatchObject({ status: 'queued', verificationId: expect.stringMatching(/^vrf_/), key: `${own}2026-12-07T03-00-00-000Z.dump.gz` });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'COMMAND_KIND_VERIFY_DATABASE', workloadKey: `database:${pg.dbAId}` });
    expect(row.payload).not.toContain(SECRET);
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(command.kind).toBe(CommandKind.COMMAND_KIND_VERIFY_DATABASE);
    expect(command.payload?.$case === 'verifyDatabase' && command.payload.value).toMatchObject({
      image: 'postgres:17',
      target: { engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'app', workload: { id: pg.dbAId, appName: pg.appName } },
      object: { endpoint: s3.endpoint, bucket: BUCKET, key: queued.key, accessKey: S3_ACCESS_KEY, secretKey: SECRET },
    });
    expect(await ok('backup.oneVerification', { verificationId: queued.verificationId })).toMatchObject({ status: 'running', trigger: 'manual', tables: null, error: null, finishedAt: null });

    const reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
    await reports.applyCommandResult('local', {
      commandId: queued.commandId,
      status: CommandStatus.COMMAND_STATUS_SUCCEEDED,
      reason: '',
      finishedAt: undefined,
      verification: { tables: [{ name: 'public.items', rows: '42' }, { name: 'public.empty', rows: '0' }] },
    });
    expect(await ok('backup.oneVerification', { verificationId: queued.verificationId })).toMatchObject({
      status: 'done',
      tables: [{ name: 'public.items', rows: 42 }, { name: 'public.empty', rows: 0 }],
      error: null,
      finishedAt: expect.any(String),
    });
    expect(await verifyEvents(backup.backupId)).toEqual([]);

    // A chosen file that does not restore: the error is kept and sent as a failure event.
    const older = await ok('backup.verify', { backupId: backup.backupId, key: `${own}2026-12-07T01-00-00-000Z.dump.gz` });
    await reports.applyCommandResult('local', { commandId: older.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason: 'the file does not restore: pg_restore exited with 1: input file is too short', finishedAt: undefined });
    expect(await ok('backup.oneVerification', { verificationId: older.verificationId })).toMatchObject({ status: 'error', tables: null, error: 'the file does not restore: pg_restore exited with 1: input file is too short' });
    const [event] = await verifyEvents(backup.backupId);
    expect(event).toMatchObject({ outcome: 'failure', summary: { verify: true, verificationId: older.verificationId, key: older.key, trigger: 'manual', error: expect.stringMatching(/input file is too short/) } });

    const listed = await ok('backup.verifications', { backupId: backup.backupId });
    expect(listed.verifications.map((v: { verificationId: string }) => v.verificationId)).toEqual([older.verificationId, queued.verificationId]);
    expect((await t.call('backup.oneVerification', { verificationId: 'vrf_nope' })).status).toBe(404);
  });

  it('verifies a MongoDB backup in a throw-away container of its image', async () => {
    const mongo = await ok('dbD.create', { name: 'mongo-verified', environmentId: env });
    const destination = await ok('destination.create', { name: 'local3', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'mongo/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbD', dbDId: mongo.dbDId, keepLatestCount: null });
    const key = `mongo/${backup.backupId}/2026-12-07T03-00-00-000Z.archive.gz`;
    await s3.put(BUCKET, key, 'archive');
    const queued = await ok('backup.verify', { backupId: backup.backupId });
    expect(queued).toMatchObject({ status: 'queued', key });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(command.payload?.$case === 'verifyDatabase' && command.payload.value).toMatchObject({
      image: 'mongo:7',
      target: { engine: DatabaseEngine.DATABASE_ENGINE_MONGO, database: 'app', workload: { id: mongo.dbDId, appName: mongo.appName } },
      object: { key },
    });
  });

  // The agent's side (the relay into the libsql container, /dump, the Hrana restore) is apps/agent's; here, what it is sent.
  it('runs, restores and verifies a libSQL backup as the others, each command naming the LIBSQL engine', async () => {
    const libsql = await ok('dbE.create', { name: 'libsql-verified', environmentId: env });
    await t.db.updateTable('databaseServices').set({ applicationStatus: 'done' }).where('id', '=', libsql.dbEId).execute();
    const destination = await ok('destination.create', { name: 'local-libsql', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'edge/', destinationId: destination.destinationId, database: 'main', databaseType: 'dbE', dbEId: libsql.dbEId, keepLatestCount: null });
    const decode = (payload: string) => Command.decode(new CommandOutbox(t.platform.secrets).open(payload));
    const workload = { id: libsql.dbEId, appName: libsql.appName, kind: WorkloadKind.WORKLOAD_KIND_CACHE };

    // A manual run queues a DumpDatabase to the service's agent, and answers from its result.
    const running = t.call('backup.manualBackupDbE', { backupId: backup.backupId });
    const dumpRow = await waitFor(
      () => t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `database:${libsql.dbEId}`).where('kind', '=', 'COMMAND_KIND_DUMP_DATABASE').executeTakeFirst(),
      { what: 'the DumpDatabase of the libSQL service' },
    );
    expect(dumpRow.payload).not.toContain(SECRET);
    const dump = decode(dumpRow.payload);
    const dumped = dump.payload?.$case === 'dumpDatabase' ? dump.payload.value : undefined;
    expect(dumped).toMatchObject({ target: { engine: DatabaseEngine.DATABASE_ENGINE_LIBSQL, database: 'main', serviceName: '', workload }, object: { bucket: BUCKET, secretKey: SECRET } });
    const key = dumped!.object!.key;
    expect(key).toMatch(new RegExp(`^edge/${backup.backupId}/[0-9T-]+Z\\.sql\\.gz$`));
    await s3.put(BUCKET, key, 'the dump of the libSQL database');
    await t.platform.reports.applyCommandResult('local', { commandId: dumpRow.id, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });
    const run = await running;
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect(run.body).toMatchObject({ backupId: backup.backupId, files: [key], size: 'the dump of the libSQL database'.length });

    // Without force it is refused, saying the whole database is replaced (a libSQL server holds one).
    const unforced = await t.call('backup.restore', { backupId: backup.backupId, key });
    expect(unforced.status).toBe(400);
    expect(unforced.body.issues).toEqual([{ path: ['force'], message: expect.stringContaining('the restore replaces its whole content') }]);
    // A restore into the running service: RestoreDatabase, the backup's database name sent (the agent ignores it for libSQL).
    const restored = await ok('backup.restore', { backupId: backup.backupId, key, force: true });
    const restore = decode((await t.db.selectFrom('commands').select('payload').where('id', '=', restored.commandId).executeTakeFirstOrThrow()).payload);
    expect(restore.kind).toBe(CommandKind.COMMAND_KIND_RESTORE_DATABASE);
    expect(restore.payload?.$case === 'restoreDatabase' && restore.payload.value).toMatchObject({ target: { engine: DatabaseEngine.DATABASE_ENGINE_LIBSQL, database: 'main', workload }, object: { key } });

    // A verification: VerifyDatabase in a throw-away container of the service's image; its result ends the record.
    const verified = await ok('backup.verify', { backupId: backup.backupId });
    expect(verified).toMatchObject({ status: 'queued', key });
    const verify = decode((await t.db.selectFrom('commands').select('payload').where('id', '=', verified.commandId).executeTakeFirstOrThrow()).payload);
    expect(verify.payload?.$case === 'verifyDatabase' && verify.payload.value).toMatchObject({
      image: libsql.containerImage,
      target: { engine: DatabaseEngine.DATABASE_ENGINE_LIBSQL, database: 'main', workload },
      object: { key },
    });
    await t.platform.reports.applyCommandResult('local', { commandId: verified.commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined, verification: { tables: [{ name: 'items', rows: '3' }] } });
    expect(await ok('backup.oneVerification', { verificationId: verified.verificationId })).toMatchObject({ status: 'done', tables: [{ name: 'items', rows: 3 }] });
  });

  it('verifies a compose stack’s database on demand and after a scheduled run, the image left to the agent', async () => {
    const stack = await ok('compose.create', { name: 'shop', environmentId: env, sourceType: 'raw', composeType: 'container-compose' });
    const destination = await ok('destination.create', { name: 'local4', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', {
      schedule: '0 3 * * *', prefix: 'stack/', destinationId: destination.destinationId, database: 'shop', databaseType: 'dbA',
      backupType: 'compose', composeId: stack.composeId, serviceName: 'db', keepLatestCount: null,
    });
    const key = `stack/${backup.backupId}/2026-12-07T03-00-00-000Z.dump.gz`;
    await s3.put(BUCKET, key, 'dump');

    // The stack need not run: the verification does not touch it.
    const queued = await ok('backup.verify', { backupId: backup.backupId });
    expect(queued).toMatchObject({ status: 'queued', key });
    const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kind: 'COMMAND_KIND_VERIFY_DATABASE', workloadKey: `compose:${stack.composeId}` });
    const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
    expect(command.payload?.$case === 'verifyDatabase' && command.payload.value).toMatchObject({
      image: '',
      target: { engine: DatabaseEngine.DATABASE_ENGINE_POSTGRES, database: 'shop', serviceName: 'db', workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: stack.composeId, appName: stack.appName } },
      object: { key },
    });

    const reports = new DeploymentReports({ db: t.db, clock: () => new Date() });
    await reports.applyCommandResult('local', { commandId: queued.commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined, verification: { tables: [{ name: 'public.items', rows: '3' }] } });
    expect(await ok('backup.oneVerification', { verificationId: queued.verificationId })).toMatchObject({ status: 'done', tables: [{ name: 'public.items', rows: 3 }], error: null });

    const backupRow = await t.db.selectFrom('backups').selectAll().where('id', '=', backup.backupId).executeTakeFirstOrThrow();
    await t.platform.backups.verifications.afterScheduledRun(backupRow, { backupId: backupRow.id, files: [key], size: 4, durationMs: 1 });
    const [scheduled] = (await ok('backup.verifications', { backupId: backup.backupId })).verifications;
    expect(scheduled).toMatchObject({ trigger: 'scheduled', key, status: 'running' });
    const reason = `the image postgres:17 of ${stack.appName} service db is not on this server: a verification never pulls an image (deploy the stack here first)`;
    await reports.applyCommandResult('local', { commandId: scheduled.commandId, status: CommandStatus.COMMAND_STATUS_FAILED, reason, finishedAt: undefined });
    expect(await ok('backup.oneVerification', { verificationId: scheduled.verificationId })).toMatchObject({ status: 'error', error: reason });
    expect(await verifyEvents(backup.backupId)).toMatchObject([{ outcome: 'failure', summary: { trigger: 'scheduled', error: reason } }]);

    // A stack that is gone is refused, naming the backup, queuing nothing.
    const before = await commandCount();
    await t.db.updateTable('backups').set({ composeId: null }).where('id', '=', backup.backupId).execute();
    await bad('backup.verify', { backupId: backup.backupId }, 'backupId', /compose stack is gone/);
    expect(await commandCount()).toBe(before);
  });

  it('takes a compose backup’s engine from its databaseType, each kind, and leaves the image to the agent', async () => {
    const stack = await ok('compose.create', { name: 'engines', environmentId: env, sourceType: 'raw', composeType: 'container-compose' });
    const destination = await ok('destination.create', { name: 'local5', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const kinds = [
      ['dbA', DatabaseEngine.DATABASE_ENGINE_POSTGRES, 'dump.gz'],
      ['dbB', DatabaseEngine.DATABASE_ENGINE_MARIADB, 'sql.gz'],
      ['dbC', DatabaseEngine.DATABASE_ENGINE_MYSQL, 'sql.gz'],
      ['dbD', DatabaseEngine.DATABASE_ENGINE_MONGO, 'archive.gz'],
    ] as const;
    for (const [databaseType, engine, extension] of kinds) {
      const backup = await ok('backup.create', {
        schedule: '0 3 * * *', prefix: `engines-${databaseType}/`, destinationId: destination.destinationId, database: 'shop', databaseType,
        backupType: 'compose', composeId: stack.composeId, serviceName: 'db', keepLatestCount: null,
      });
      const key = `engines-${databaseType}/${backup.backupId}/2026-12-07T03-00-00-000Z.${extension}`;
      await s3.put(BUCKET, key, 'dump');
      const queued = await ok('backup.verify', { backupId: backup.backupId });
      const row = await t.db.selectFrom('commands').selectAll().where('id', '=', queued.commandId).executeTakeFirstOrThrow();
      const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
      expect(command.payload?.$case === 'verifyDatabase' && command.payload.value, databaseType).toMatchObject({
        image: '',
        target: { engine, database: 'shop', serviceName: 'db', workload: { kind: WorkloadKind.WORKLOAD_KIND_COMPOSE, id: stack.composeId } },
        object: { key },
      });
    }
  });

  it('verifies the file of a successful scheduled run, and only of database services it can verify', async () => {
    const pg = await ok('dbA.create', { name: 'pg-scheduled', environmentId: env });
    const destination = await ok('destination.create', { name: 'local2', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: SECRET });
    const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: 'sched/', destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: pg.dbAId, keepLatestCount: null });
    const key = `sched/${backup.backupId}/2026-12-07T03-00-00-000Z.dump.gz`;
    await s3.put(BUCKET, key, 'dump');
    const row = await t.db.selectFrom('backups').selectAll().where('id', '=', backup.backupId).executeTakeFirstOrThrow();
    await t.platform.backups.verifications.afterScheduledRun(row, { backupId: row.id, files: [key], size: 4, durationMs: 1 });
    const [verification] = (await ok('backup.verifications', { backupId: backup.backupId })).verifications;
    expect(verification).toMatchObject({ trigger: 'scheduled', key, status: 'running' });

    const before = await commandCount();
    await t.platform.backups.verifications.afterScheduledRun({ ...row, databaseType: 'web-server', dbAId: null }, { backupId: row.id, files: [key], size: 4, durationMs: 1 });
    expect(await commandCount()).toBe(before);
  });
});
