import type { VolumeBackup, VolumeRestore } from '@skiff/db';
import { cronError, normalizeBackupPrefix } from '@skiff/domain';
import { OutboundRefused } from '@skiff/outbound';
import type { Logger } from 'pino';
import { DUMP_DEADLINE_MS } from '../../agents/outbound/kinds/database-dump.js';
import { backupVolumeCommand, restoreVolumeCommand } from '../../agents/outbound/kinds/volume-backup.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { type EventSignal, recordEvent } from '../events/events.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { type BackupLimits, DEFAULT_BACKUP_LIMITS, assertBackupRoom } from './backup-limits.js';
import { DumpFailed } from './database-dumps.js';
import type { DestinationService } from './destinations.js';
import { isFileIn, objectKey, ownPrefix } from './object-names.js';
import { type BackupRuns, RunRecorded } from './runs.js';
import { type BackupRunner, archiveExtension } from './runner.js';
import { BucketError } from './s3.js';

export interface VolumeBackupInput {
  applicationId: string;
  volumeName: string;
  destinationId: string;
  schedule: string;
  prefix: string;
  keepLatestCount?: number | null;
  enabled?: boolean | null;
}

export interface VolumeRestoreInput {
  volumeBackupId: string;
  key: string;
  volumeName?: string | null;
  force?: boolean;
}

/**
 * `volumeBackup.*` (beyond the spec): schedules of an application's named volume, their runs
 * (BackupVolume on the agent of the application's server, its outcome recorded from the
 * command's result like database dumps' (runs.ts) as `volumeBackup` events with outcome, size
 * and duration; retention as backups'),
 * and restores into a volume of the same application (RestoreVolume), kept in
 * `volume_restores`. Access follows the application.
 */
export class VolumeBackups {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly destinations: DestinationService,
    private readonly runner: BackupRunner,
    private readonly outbox: CommandOutbox,
    private readonly signal: EventSignal,
    private readonly log: Logger,
    private readonly runs: BackupRuns,
    private readonly limits: BackupLimits = DEFAULT_BACKUP_LIMITS,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** The application's `volume` mount of that name, or BAD_REQUEST naming `field`. */
  private async volumeOf(applicationId: string, volumeName: string, field: string): Promise<string> {
    const mount = await this.db
      .selectFrom('applicationMounts')
      .select('volumeName')
      .where('applicationId', '=', applicationId)
      .where('type', '=', 'volume')
      .where('volumeName', '=', volumeName)
      .executeTakeFirst();
    if (!mount) throw Invalid(field, 'not a named volume of the application (mounts.create with type volume)');
    return volumeName;
  }

  async create(p: Principal, input: VolumeBackupInput) {
    const { row: app, project } = await this.access.find(p, 'application', input.applicationId);
    const why = cronError(input.schedule);
    if (why) throw Invalid('schedule', `not a valid cron expression: ${why}`);
    if (/[\x00-\x1f\x7f\\]/.test(input.prefix)) throw Invalid('prefix', 'must not contain control characters or backslashes');
    const prefix = normalizeBackupPrefix(input.prefix);
    if (prefix === null) throw Invalid('prefix', 'must not contain . or .. segments');
    await this.volumeOf(app.id, input.volumeName, 'volumeName');
    await this.destinations.reference(p, input.destinationId);
    const row = await this.db.transaction().execute(async (tx) => {
      await assertBackupRoom(tx, this.limits, project.organizationId, { table: 'volumeBackups', column: 'applicationId', id: app.id, field: 'volumeName', volumeName: input.volumeName });
      return tx
        .insertInto('volumeBackups')
        .values({
          id: this.deps.ids('vbk'),
          organizationId: project.organizationId,
          applicationId: app.id,
          volumeName: input.volumeName,
          destinationId: input.destinationId,
          schedule: input.schedule.trim(),
          enabled: input.enabled ?? true,
          prefix,
          keepLatestCount: input.keepLatestCount ?? null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return record(row);
  }

  /** A volume backup the caller may see: of their organization, its application visible to them. */
  async find(p: Principal, id: string): Promise<VolumeBackup> {
    const row = await this.db.selectFrom('volumeBackups').selectAll().where('id', '=', id).where('organizationId', '=', p.organizationId).executeTakeFirst();
    if (!row) throw NotFound('No such volume backup');
    await this.access.through(p, 'application', row.applicationId, 'volume backup');
    return row;
  }

  async one(p: Principal, id: string) {
    return record(await this.find(p, id));
  }

  async remove(p: Principal, id: string) {
    const row = await this.find(p, id);
    await this.db.deleteFrom('volumeBackups').where('id', '=', row.id).execute();
    return record(row);
  }

  /** `volumeBackup.manualBackup`: a run now; its failure answers the reason. */
  async manual(p: Principal, id: string) {
    const row = await this.find(p, id);
    try {
      return await this.run(row);
    } catch (err) {
      if (err instanceof DomainError) throw err;
      if (err instanceof OutboundRefused) throw Invalid('endpoint', err.message);
      if (err instanceof DumpFailed || err instanceof BucketError) throw new DomainError('INTERNAL_SERVER_ERROR', `The backup failed: ${err.message}`);
      throw err;
    }
  }

  /**
   * Runs one volume backup now (`claimed`: the scheduler's run row of this firing): its
   * BackupVolume's result is recorded whoever waits for it (runs.ts); a failure before the agent
   * has it is recorded here, then thrown.
   */
  async run(row: VolumeBackup, claimed?: string) {
    const started = this.deps.clock();
    const runId = claimed ?? (await this.runs.begin(this.db, { volumeBackupId: row.id }, row.organizationId, 'manual', started));
    if (claimed) await this.runs.started(runId, started);
    this.runs.hold(runId);
    let workload: { kind: string; id: string; name: string } | undefined;
    try {
      const app = await this.db.selectFrom('applications').select(['id', 'appName', 'serverId']).where('id', '=', row.applicationId).executeTakeFirst();
      if (!app) throw new DumpFailed('the backup’s application is gone');
      workload = { kind: 'application', id: app.id, name: app.appName };
      const destination = await this.db.selectFrom('destinations').selectAll().where('id', '=', row.destinationId).executeTakeFirstOrThrow();
      // The endpoint is checked against the outbound policy before the agent is sent to it.
      (await this.runner.open(this.runner.settingsOf(destination))).close();
      const key = objectKey(row.prefix, row.id, started, archiveExtension(destination, 'tar.gz'));
      const now = this.deps.clock();
      const commandId = this.deps.ids('cmd');
      const deadline = new Date(now.getTime() + DUMP_DEADLINE_MS);
      const command = backupVolumeCommand({ commandId, application: app, volumeName: row.volumeName, object: this.runner.objectOf(destination, key), createdAt: now, deadline });
      await this.db.transaction().execute(async (tx) => {
        await this.outbox.queue(tx, command);
        await this.runs.attach(tx, runId, commandId, key);
      });
      this.outbox.notify();
      return { volumeBackupId: row.id, ...(await this.runs.wait(runId, deadline)) };
    } catch (err) {
      if (err instanceof RunRecorded) throw err;
      const durationMs = this.deps.clock().getTime() - started.getTime();
      const error = err instanceof Error ? err.message : String(err);
      this.log.warn({ volumeBackupId: row.id, error }, 'volume backup failed');
      const recorded = await this.db.transaction().execute(async (tx) => {
        if (!(await this.runs.settle(tx, runId, false, error, 0))) return false;
        await recordEvent(tx, { organizationId: row.organizationId, kind: 'volumeBackup', outcome: 'failure', workload, summary: { volumeBackupId: row.id, volumeName: row.volumeName, files: [], size: 0, durationMs, error } });
        return true;
      });
      if (recorded) this.signal.notify();
      throw err;
    } finally {
      this.runs.release(runId);
    }
  }

  async restore(p: Principal, input: VolumeRestoreInput) {
    const row = await this.find(p, input.volumeBackupId);
    const own = ownPrefix(row.prefix, row.id);
    if (!isFileIn(input.key, own)) {
      throw Invalid('key', `not a file of this backup (its files are ${own}<time>.tar.gz[.age], as backup.listBackupFiles lists them)`);
    }
    const volumeName = await this.volumeOf(row.applicationId, input.volumeName ?? row.volumeName, 'volumeName');
    const app = await this.db.selectFrom('applications').select(['id', 'appName', 'serverId']).where('id', '=', row.applicationId).executeTakeFirstOrThrow();
    const destination = await this.db.selectFrom('destinations').selectAll().where('id', '=', row.destinationId).executeTakeFirstOrThrow();
    const settings = this.runner.settingsOf(destination);
    // The endpoint is checked against the outbound policy before the agent is sent to it.
    (await this.runner.open(settings)).close();
    const now = this.deps.clock();
    const restoreId = this.deps.ids('vrs');
    const commandId = this.deps.ids('cmd');
    const command = restoreVolumeCommand({
      commandId,
      application: app,
      volumeName,
      object: this.runner.objectOf(destination, input.key),
      createdAt: now,
      deadline: new Date(now.getTime() + DUMP_DEADLINE_MS),
      force: input.force === true,
    });
    const restored = await this.db.transaction().execute(async (tx) => {
      const created = await tx
        .insertInto('volumeRestores')
        .values({ id: restoreId, organizationId: row.organizationId, volumeBackupId: row.id, volumeName, objectKey: input.key, commandId, status: 'running' })
        .returningAll()
        .executeTakeFirstOrThrow();
      await this.outbox.queue(tx, command);
      return created;
    });
    this.outbox.notify();
    return restoreRecord(restored);
  }

  async oneRestore(p: Principal, restoreId: string) {
    const row = await this.db.selectFrom('volumeRestores').selectAll().where('id', '=', restoreId).where('organizationId', '=', p.organizationId).executeTakeFirst();
    if (!row) throw NotFound('No such restore');
    await this.find(p, row.volumeBackupId);
    return restoreRecord(row);
  }
}

const record = (row: VolumeBackup) => ({
  volumeBackupId: row.id,
  organizationId: row.organizationId,
  applicationId: row.applicationId,
  volumeName: row.volumeName,
  destinationId: row.destinationId,
  schedule: row.schedule,
  enabled: row.enabled,
  prefix: row.prefix,
  keepLatestCount: row.keepLatestCount,
  lastSuccessAt: row.lastSuccessAt === null ? null : iso(row.lastSuccessAt),
  createdAt: iso(row.createdAt),
});

const restoreRecord = (row: VolumeRestore) => ({
  restoreId: row.id,
  volumeBackupId: row.volumeBackupId,
  volumeName: row.volumeName,
  key: row.objectKey,
  commandId: row.commandId,
  status: row.status,
  log: row.log,
  createdAt: iso(row.createdAt),
  finishedAt: row.finishedAt === null ? null : iso(row.finishedAt),
});
