// A backup run's outcome does not depend on the process that started it. Two control planes on
// one PostgreSQL database and an S3-compatible server, the agent's side played by its reports
// (the object put as its upload would, its result applied as the report server applies it):
// a manual database backup whose control plane stopped while its request waited is recorded
// when the agent's result reaches the other one (one event, last success, retention), a
// redelivered result records nothing more; a scheduled run's result arriving the same way also
// queues its verification, once; a run whose control plane stopped before its command was
// queued is recorded as a failure saying so, once; after an outage the catch-up run decides
// before any stale alert.
import { randomBytes } from 'node:crypto';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { Command, CommandStatus } from '@skiff/proto';
import { waitFor } from '@skiff/testing';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandOutbox } from '../../agents/outbound/outbox.js';
import { buildPlatform, type Platform } from '../../compose-root.js';
import { apiClient, startTestPlatform, type TestPlatform } from '../../testing/harness.js';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3 } from '../../testing/s3-server.js';
import { STOPPED_REASON } from './runs.js';

const BUCKET = 'skiff-run-outcomes';
const secretKey = randomBytes(32);
let now = new Date('2026-12-08T03:00:10Z');
let t: TestPlatform;
let s3: Awaited<ReturnType<typeof startS3>>;
let env: string;
const others: Platform[] = [];

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  t = await startTestPlatform({ secretKey, clock: () => now, backups: { dumpPollMs: 20 } });
  env = (await t.call('project.create', { name: 'outcomes' })).body.environments[0].environmentId;
});
afterAll(async () => {
  for (const b of others) await b.close().catch(() => undefined);
  await t?.close();
  await s3?.close();
});

/** Another control plane on the same database (the one that will stop), with its API client. */
async function otherControlPlane(backups: { bucketTimeoutMs?: number } = {}) {
  const b = await buildPlatform({
    database: { url: t.databaseUrl! },
    secretKey,
    log: pino({ level: 'silent' }),
    version: '0.0.0-test',
    clock: () => now,
    outbound: { allowPrivate: true },
    host: { dailyCleanupTickMs: false },
    backups: { start: false, dumpPollMs: 20, ...backups },
    events: { start: false },
  });
  others.push(b);
  const { contractsByName } = await import('@skiff/contracts');
  return { b, call: apiClient(b.app, t.ownerKey, (op) => contractsByName.get(op)?.method ?? 'POST') };
}

const ok = async (op: string, input: Record<string, unknown>) => {
  const r = await t.call(op, input);
  expect(r.status, `${op} ${JSON.stringify(r.body)}`).toBe(200);
  return r.body;
};

/** A running PostgreSQL service (as its deploy would leave it) and a backup of it on the S3 server. */
async function databaseBackup(name: string, overrides: Record<string, unknown> = {}) {
  const pg = await ok('dbA.create', { name, environmentId: env });
  await t.db.updateTable('databaseServices').set({ applicationStatus: 'done' }).where('id', '=', pg.dbAId).execute();
  const destination = await ok('destination.create', { name, endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
  const backup = await ok('backup.create', { schedule: '0 3 * * *', prefix: `${name}/`, destinationId: destination.destinationId, database: 'app', databaseType: 'dbA', dbAId: pg.dbAId, keepLatestCount: 1, ...overrides });
  await onlyScheduled(backup.backupId);
  return { pg, backup };
}

/** The earlier tests' schedules off (their runs would wait for an agent in the organization's lane); created now. */
async function onlyScheduled(backupId: string) {
  await t.db.updateTable('backups').set({ enabled: false }).where('id', '!=', backupId).execute();
  await t.db.updateTable('backups').set({ createdAt: now } as never).where('id', '=', backupId).execute();
}

/** The DumpDatabase queued for the database service, once it is there, and the object it writes. */
async function dumpCommand(dbAId: string) {
  const row = await waitFor(() => t.db.selectFrom('commands').selectAll().where('workloadKey', '=', `database:${dbAId}`).where('kind', '=', 'COMMAND_KIND_DUMP_DATABASE').executeTakeFirst(), { what: 'a DumpDatabase command' });
  const command = Command.decode(new CommandOutbox(t.platform.secrets).open(row.payload));
  const key = command.payload?.$case === 'dumpDatabase' ? command.payload.value.object!.key : '';
  return { id: row.id, key };
}

const eventsOf = async (backupId: string) =>
  (await t.db.selectFrom('events').selectAll().where('kind', '=', 'databaseBackup').orderBy('id').execute()).filter((e) => (e.summary as any).backupId === backupId);
const succeeded = (commandId: string) => ({ commandId, status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '', finishedAt: undefined });

describe('a run whose control plane stopped', () => {
  it('is recorded from the agent’s result by the other control plane, once, also when the result comes again', async () => {
    now = new Date('2026-12-08T03:00:10Z');
    const { pg, backup } = await databaseBackup('manual');
    const older = `manual/${backup.backupId}/2026-12-01T03-00-00-000Z.dump.gz`;
    await s3.put(BUCKET, older, 'an older dump');
    const { b, call } = await otherControlPlane();
    // The request waits on B; B stops (its request with it) while the agent dumps.
    const abandoned = call('backup.manualBackupDbA', { backupId: backup.backupId }).catch(() => undefined);
    const command = await dumpCommand(pg.dbAId);
    expect(command.key).toBe(`manual/${backup.backupId}/2026-12-08T03-00-10-000Z.dump.gz`);
    await b.close();
    void abandoned;
    expect(await eventsOf(backup.backupId)).toEqual([]);

    // The agent's upload, then its result, reach the control plane still running.
    await s3.put(BUCKET, command.key, 'the dump of the database');
    expect(await t.platform.reports.applyCommandResult('local', succeeded(command.id))).toBe('applied');
    const [event] = await waitFor(async () => ((await eventsOf(backup.backupId)).length > 0 ? eventsOf(backup.backupId) : undefined), { what: 'the backup’s event' });
    expect(event).toMatchObject({ outcome: 'success', summary: { backupId: backup.backupId, files: [command.key], size: 'the dump of the database'.length } });
    expect((await ok('backup.one', { backupId: backup.backupId })).lastSuccessAt).toBe('2026-12-08T03:00:10.000Z');
    // Retention kept the newest file only.
    expect(await s3.keys(BUCKET, `manual/${backup.backupId}/`)).toEqual([command.key]);

    // The result again (the agent re-reports it), and every sweep after: still one event.
    expect(await t.platform.reports.applyCommandResult('local', succeeded(command.id))).toBe('duplicate');
    await t.platform.backups.runs.sweep();
    await t.platform.backups.scheduler.tick();
    expect(await eventsOf(backup.backupId)).toHaveLength(1);
  });

  it('records a scheduled run’s result and queues its verification once, whoever receives it', async () => {
    now = new Date('2026-12-09T03:00:20Z');
    const { pg, backup } = await databaseBackup('scheduled', { keepLatestCount: null });
    await t.db.updateTable('backups').set({ createdAt: new Date('2026-12-08T12:00:00Z') } as never).where('id', '=', backup.backupId).execute();
    const { b } = await otherControlPlane();
    // B claims the 03:00 firing and queues its dump, then stops.
    expect(await b.backups.scheduler.tick(false)).toContain(backup.backupId);
    const command = await dumpCommand(pg.dbAId);
    // Stopped as by a kill: its database connections gone under its waiting run.
    await b.database.close();
    await s3.put(BUCKET, command.key, 'scheduled dump');
    // Two control planes get the result (a redelivery racing the first): one records it.
    const { b: c } = await otherControlPlane();
    const applied = await Promise.all([t.platform.reports.applyCommandResult('local', succeeded(command.id)), c.reports.applyCommandResult('local', succeeded(command.id))]);
    expect(applied.sort()).toEqual(['applied', 'duplicate']);
    await Promise.all([t.platform.backups.runs.sweep(), c.backups.runs.sweep()]);
    expect((await eventsOf(backup.backupId)).map((e) => e.outcome)).toEqual(['success']);
    const verifications = await t.db.selectFrom('backupVerifications').selectAll().where('backupId', '=', backup.backupId).execute();
    expect(verifications).toMatchObject([{ trigger: 'scheduled', objectKey: command.key, status: 'running' }]);
    expect((await ok('backup.one', { backupId: backup.backupId })).lastSuccessAt).toBe('2026-12-09T03:00:20.000Z');
  });

  it('records a run left without its command as a failure saying the control plane stopped, once', async () => {
    now = new Date('2026-12-10T03:00:30Z');
    const { backup } = await databaseBackup('orphan', { keepLatestCount: null });
    // As a control plane leaves a firing it claimed and then stopped before queuing the dump.
    const runId = await t.platform.backups.runs.begin(t.db, { backupId: backup.backupId }, t.organizationId, 'scheduled', now);
    await t.db.updateTable('backups').set({ lastScheduledAt: new Date('2026-12-10T03:00:00Z') }).where('id', '=', backup.backupId).execute();
    await t.platform.backups.runs.sweep();
    expect(await eventsOf(backup.backupId)).toEqual([]);
    await t.db.updateTable('backupRuns').set({ heartbeatAt: sql<Date>`now() - interval '6 minutes'` }).where('id', '=', runId).execute();
    const { b } = await otherControlPlane();
    await Promise.all([t.platform.backups.scheduler.tick(), b.backups.runs.sweep()]);
    const events = await eventsOf(backup.backupId);
    expect(events).toMatchObject([{ outcome: 'failure', summary: { backupId: backup.backupId, trigger: 'scheduled', error: STOPPED_REASON } }]);
    await b.close();
  });
});

describe('a run this control plane holds', () => {
  it('is not taken for orphaned by its own sweep, however old its heartbeat; once taken, its command is not queued', async () => {
    now = new Date('2026-12-10T09:00:00Z');
    const { pg, backup } = await databaseBackup('held', { keepLatestCount: null });
    const runs = t.platform.backups.runs;
    const runId = await runs.begin(t.db, { backupId: backup.backupId }, t.organizationId, 'scheduled', now);
    // Its heartbeat lapsed (the database was out of reach longer than ORPHANED_AFTER_MS) while this process still carries it.
    runs.hold(runId);
    await t.db.updateTable('backupRuns').set({ heartbeatAt: sql<Date>`now() - interval '6 minutes'` }).where('id', '=', runId).execute();
    await runs.sweep();
    expect(await eventsOf(backup.backupId)).toEqual([]);
    expect(await t.db.selectFrom('backupRuns').select('status').where('id', '=', runId).executeTakeFirstOrThrow()).toEqual({ status: 'running' });

    // Another control plane takes it for orphaned: the runner still carrying it queues no dump, records nothing more.
    const { b } = await otherControlPlane();
    await b.backups.runs.sweep();
    await b.close();
    expect((await eventsOf(backup.backupId)).map((e) => e.outcome)).toEqual(['failure']);
    const row = await t.db.selectFrom('backups').selectAll().where('id', '=', backup.backupId).executeTakeFirstOrThrow();
    await expect(t.platform.backups.runner.run(row, runId)).rejects.toThrow(STOPPED_REASON);
    runs.release(runId);
    const dumps = await t.db.selectFrom('commands').select('id').where('workloadKey', '=', `database:${pg.dbAId}`).where('kind', '=', 'COMMAND_KIND_DUMP_DATABASE').execute();
    expect(dumps).toEqual([]);
    expect(await eventsOf(backup.backupId)).toHaveLength(1);
  });
});

/** An endpoint that takes connections and never answers; `close` ends them (and, again, does nothing). */
async function startTarpit(): Promise<{ endpoint: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      })),
  };
}

/** A run's row as its command's result leaves it: ended, succeeded, its object named. */
const endedRun = (id: string, organizationId: string, backupId: string, objectKey: string) =>
  ({ id, organizationId, backupId, trigger: 'manual' as const, status: 'ended' as const, succeeded: true, commandId: `cmd_${id}`, objectKey, startedAt: now, endedAt: now });

describe('a run whose bucket never answers', () => {
  it('holds up no other run’s record: its size and retention are given up after a while, its outcome recorded', async () => {
    now = new Date('2026-12-12T09:00:00Z');
    const tarpit = await startTarpit();
    try {
      const { backup: stuck } = await databaseBackup('tarpit', { keepLatestCount: 1 });
      const { backup: beside } = await databaseBackup('beside-tarpit', { keepLatestCount: null });
      await t.db.updateTable('backups').set({ enabled: false }).execute();
      // Another organization's, in a real case: its endpoint accepts connections and never answers.
      await t.db.updateTable('destinations').set({ endpoint: tarpit.endpoint }).where('id', '=', stuck.destinationId).execute();
      await s3.put(BUCKET, 'beside-tarpit/run.dump.gz', 'beside');
      const ended = (id: string, backupId: string, objectKey: string) => endedRun(id, t.organizationId, backupId, objectKey);
      await t.db.insertInto('backupRuns').values([ended('brn_tarpit', stuck.backupId, 'tarpit/run.dump.gz'), ended('brn_beside', beside.backupId, 'beside-tarpit/run.dump.gz')]).execute();
      const { b } = await otherControlPlane({ bucketTimeoutMs: 300 });
      const sweep = b.backups.runs.sweep();
      const [event] = await waitFor(async () => ((await eventsOf(beside.backupId)).length > 0 ? eventsOf(beside.backupId) : undefined), { what: 'the other run’s event', timeoutMs: 5_000 });
      expect(event).toMatchObject({ outcome: 'success', summary: { size: 'beside'.length } });
      await sweep;
      expect(await eventsOf(stuck.backupId)).toMatchObject([{ outcome: 'success', summary: { files: ['tarpit/run.dump.gz'], size: 0 } }]);
      await b.close();

      // The timer's tick leaves the records to the sweep behind it: schedules do not wait for a bucket.
      await t.db.insertInto('backupRuns').values(ended('brn_tarpit_again', stuck.backupId, 'tarpit/again.dump.gz')).execute();
      const { b: c } = await otherControlPlane();
      const ticked = await Promise.race([c.backups.scheduler.tick(false).then(() => 'ticked'), new Promise((resolve) => setTimeout(resolve, 3_000, 'held'))]);
      expect(ticked).toBe('ticked');
      await tarpit.close();
      await c.close();
    } finally {
      await tarpit.close();
    }
  });
});

describe('records of several organizations', () => {
  it('go side by side: one whose bucket never answers does not hold up another organization’s', async () => {
    now = new Date('2026-12-12T09:30:00Z');
    const tarpit = await startTarpit();
    try {
      const { backup: stuck } = await databaseBackup('lane-tarpit', { keepLatestCount: 1 });
      const { backup: beside } = await databaseBackup('lane-beside', { keepLatestCount: null });
      await t.db.updateTable('backups').set({ enabled: false }).execute();
      await t.db.updateTable('destinations').set({ endpoint: tarpit.endpoint }).where('id', '=', stuck.destinationId).execute();
      await s3.put(BUCKET, 'lane-beside/run.dump.gz', 'beside');
      const elsewhere = (await t.call('organization.create', { name: `Elsewhere ${randomBytes(3).toString('hex')}` })).body.organizationId as string;
      // The stuck run is listed first, and is another organization's.
      await t.db.insertInto('backupRuns').values([endedRun('brn_a_lane_tarpit', elsewhere, stuck.backupId, 'lane-tarpit/run.dump.gz'), endedRun('brn_b_lane_beside', t.organizationId, beside.backupId, 'lane-beside/run.dump.gz')]).execute();
      const { b } = await otherControlPlane({ bucketTimeoutMs: 30_000 });
      const sweep = b.backups.runs.sweep();
      const [event] = await waitFor(async () => ((await eventsOf(beside.backupId)).length > 0 ? eventsOf(beside.backupId) : undefined), { what: 'the other organization’s event', timeoutMs: 5_000 });
      expect(event).toMatchObject({ outcome: 'success', summary: { size: 'beside'.length } });
      await tarpit.close();
      await sweep;
      await b.close();
    } finally {
      await tarpit.close();
    }
  });
});

describe('recorded runs', () => {
  it('are deleted 30 days after they were recorded; newer and unfinished ones are kept', async () => {
    now = new Date('2026-12-12T03:00:30Z');
    const { backup } = await databaseBackup('pruned', { keepLatestCount: null });
    const day = 24 * 3600_000;
    const row = (id: string, status: 'done' | 'error' | 'running', finishedDaysAgo: number | null) => ({
      id,
      organizationId: t.organizationId,
      backupId: backup.backupId,
      trigger: 'scheduled' as const,
      status,
      startedAt: new Date(now.getTime() - 40 * day),
      finishedAt: finishedDaysAgo === null ? null : new Date(now.getTime() - finishedDaysAgo * day),
      commandId: finishedDaysAgo === null ? `cmd_prune_${id}` : null,
    });
    await t.db.insertInto('backupRuns').values([row('brn_old_done', 'done', 31), row('brn_old_error', 'error', 35), row('brn_recent', 'done', 29), row('brn_unfinished', 'running', null)]).execute();
    const { b } = await otherControlPlane();
    await b.backups.runs.sweep();
    const left = (await t.db.selectFrom('backupRuns').select('id').where('backupId', '=', backup.backupId).execute()).map((r) => r.id).sort();
    expect(left).toEqual(['brn_recent', 'brn_unfinished']);
    await b.close();
  });
});

describe('after an outage', () => {
  it('lets the catch-up run decide before a stale alert', async () => {
    now = new Date('2026-12-11T09:30:00Z');
    const destination = await ok('destination.create', { name: 'platform', endpoint: s3.endpoint, region: 'us-east-1', bucket: BUCKET, accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY });
    const backup = await ok('backup.create', { schedule: '0 * * * *', prefix: 'catchup/', destinationId: destination.destinationId, database: 'skiff', databaseType: 'web-server', keepLatestCount: null });
    await onlyScheduled(backup.backupId);
    // Created at 04:10, last run at 05:00: four hours without a success, at twice the hourly interval.
    await t.db.updateTable('backups').set({ createdAt: new Date('2026-12-11T04:10:00Z'), lastScheduledAt: new Date('2026-12-11T05:00:00Z') } as never).where('id', '=', backup.backupId).execute();
    expect(await t.platform.backups.scheduler.tick()).toContain(backup.backupId);
    const events = (await t.db.selectFrom('events').selectAll().where('kind', '=', 'platformBackup').orderBy('id').execute()).filter((e) => (e.summary as any).backupId === backup.backupId);
    expect(events.map((e) => [e.outcome, (e.summary as any).stale ?? false])).toEqual([['success', false]]);
  });
});
