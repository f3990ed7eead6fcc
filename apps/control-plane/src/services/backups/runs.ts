import type { BackupRun, Database, Db, Destination } from '@skiff/db';
import { type ExpressionBuilder, sql } from 'kysely';
import type { Logger } from 'pino';
import { type EventSignal, recordEvent } from '../events/events.js';
import type { ServiceDeps } from '../shared/deps.js';
import { DumpFailed } from './database-dumps.js';
import { ownPrefix, retentionVictims } from './object-names.js';
import type { Bucket, BucketSettings } from './s3.js';
import type { BackupVerifications, PreparedVerification } from './verifications.js';

/** How often a control plane marks the runs it holds (and that have no command) as alive. */
export const HEARTBEAT_MS = 60_000;
/** A run without a command whose heartbeat is older than this was held by a control plane that stopped. */
export const ORPHANED_AFTER_MS = 5 * 60_000;
export const STOPPED_REASON = 'the control plane stopped during the run';

const POLL_MS = 250;

/** A run without a command whose control plane stopped: no heartbeat for ORPHANED_AFTER_MS. */
const orphaned = (eb: ExpressionBuilder<Database, 'backupRuns'>) =>
  eb.and([eb('status', '=', 'running'), eb('commandId', 'is', null), eb('heartbeatAt', '<', sql<Date>`now() - make_interval(secs => ${ORPHANED_AFTER_MS / 1000})`)]);
/**
 * How long a run's record waits for its bucket (the stored size, retention): runs are recorded
 * one after the other by one sweep, and an endpoint that never answers (an organization's own
 * choice) must not hold every other organization's records, nor the scheduler that sweeps first.
 */
export const BUCKET_TIMEOUT_MS = 60_000;
/** A recorded run's row is kept this long (its event, kept as long as events are, says the same). */
export const RUN_RETENTION_MS = 30 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

/**
 * A run's failure that its record already holds, or will hold once its command ends: the
 * runner answers it but records nothing more.
 */
export class RunRecorded extends DumpFailed {}

export type RunSubjectRef = { backupId: string } | { volumeBackupId: string };

/** What records a run needs from the runner (its buckets) and the verifications (after a scheduled run); set by the wiring. */
export interface RunLinks {
  buckets?: { open(settings: BucketSettings): Promise<Bucket>; settingsOf(d: Destination): BucketSettings };
  verifications?: BackupVerifications;
}

/** What a run is recorded against: its schedule's row, event kind, summary and lapse. */
interface Subject {
  table: 'backups' | 'volumeBackups';
  id: string;
  kind: 'databaseBackup' | 'platformBackup' | 'volumeBackup';
  summary: Record<string, unknown>;
  workload?: { kind: string; id: string; name: string };
  destinationId: string;
  prefix: string;
  keepLatestCount: number | null;
}

/**
 * Backup runs (`backup_runs`): each run's row, from the scheduler's claim (or a manual run's
 * start) to its recorded event, so that the outcome does not depend on the process (or the HTTP
 * request) that started it. A run handed to an agent ends when its command's result arrives
 * (run-records.ts, in the result's transaction); whichever control plane then sees it `ended`
 * (the waiting request, a report's wake-up, the scheduler's sweep, a restart) records its
 * size, retention, event, last success and, after a scheduled database run, its
 * verification: claimed on the row's status, so exactly once. A run without a command whose
 * control plane stopped (no heartbeat for ORPHANED_AFTER_MS) is recorded as a failure saying so.
 */
export class BackupRuns {
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private readonly finishing = new Map<string, Promise<void>>();
  private sweeping: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly signal: EventSignal,
    private readonly log: Logger,
    readonly links: RunLinks = {},
    private readonly pollMs = POLL_MS,
    private readonly bucketTimeoutMs = BUCKET_TIMEOUT_MS,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** A new run's row (`running`), held (heartbeat) by this control plane until `release`. */
  async begin(db: Db, ref: RunSubjectRef, organizationId: string, trigger: 'manual' | 'scheduled', startedAt: Date): Promise<string> {
    const id = this.deps.ids('brn');
    await db
      .insertInto('backupRuns')
      .values({ id, organizationId, ...('backupId' in ref ? { backupId: ref.backupId } : { volumeBackupId: ref.volumeBackupId }), trigger, status: 'running', startedAt })
      .execute();
    return id;
  }

  /** A claimed run (the scheduler's) starting now: its start is the run's, not the claim's. */
  async started(runId: string, startedAt: Date): Promise<void> {
    await this.db.updateTable('backupRuns').set({ startedAt, heartbeatAt: sql<Date>`now()` }).where('id', '=', runId).where('status', '=', 'running').execute();
  }

  /**
   * The run's agent command and object, written in the transaction that queues the command.
   * A run no longer `running` (taken for orphaned by another control plane, or its backup
   * removed) throws RunRecorded: the command's queueing rolls back with it.
   */
  async attach(tx: Db, runId: string, commandId: string, objectKey: string): Promise<void> {
    const attached = await tx.updateTable('backupRuns').set({ commandId, objectKey }).where('id', '=', runId).where('status', '=', 'running').returning('id').executeTakeFirst();
    if (attached) return;
    const run = await tx.selectFrom('backupRuns').select('error').where('id', '=', runId).executeTakeFirst();
    throw new RunRecorded(run ? (run.error ?? 'the run was recorded before its command was queued') : 'the backup was removed during its run');
  }

  /** Keeps the run's heartbeat fresh while this process holds it. */
  hold(runId: string): void {
    this.held.add(runId);
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.held.size === 0) return;
      this.db
        .updateTable('backupRuns')
        .set({ heartbeatAt: sql<Date>`now()` })
        .where('id', 'in', [...this.held])
        .where('status', '=', 'running')
        .execute()
        .catch((err: unknown) => this.log.warn({ err: (err as Error).message }, 'backup run heartbeat failed'));
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  release(runId: string): void {
    this.held.delete(runId);
  }

  /**
   * Settles a run this process carried out itself (the platform's, or one that failed before its
   * command was queued), inside the transaction that records its event: false when it was
   * already settled (taken for orphaned), and then nothing more must be recorded.
   */
  async settle(tx: Db, runId: string, ok: boolean, error: string | null, size: number): Promise<boolean> {
    const mine = await tx
      .updateTable('backupRuns')
      .set({ status: ok ? 'done' : 'error', error, size, finishedAt: this.deps.clock() })
      .where('id', '=', runId)
      .where('status', '=', 'running')
      .returning('id')
      .executeTakeFirst();
    return mine !== undefined;
  }

  /**
   * Waits until the run is recorded (recording it when its command ended); answers what it
   * stored, or throws RunRecorded with the reason. A run whose command outlives the wait stays
   * to be recorded when it ends.
   */
  async wait(runId: string, deadline: Date): Promise<{ files: string[]; size: number; durationMs: number }> {
    for (;;) {
      const run = await this.db.selectFrom('backupRuns').selectAll().where('id', '=', runId).executeTakeFirst();
      if (!run) throw new RunRecorded('the backup was removed during its run');
      if (run.status === 'ended') {
        await this.finish(runId);
        continue;
      }
      if (run.status === 'done') return { files: run.objectKey ? [run.objectKey] : [], size: run.size ?? 0, durationMs: durationOf(run) };
      if (run.status === 'error') throw new RunRecorded(run.error ?? 'the run failed');
      // The deadline was set by the same clock.
      if (this.deps.clock().getTime() > deadline.getTime() + 60_000) throw new RunRecorded('the agent did not answer before the deadline (the run is recorded when its command ends)');
      await new Promise((r) => setTimeout(r, this.pollMs));
    }
  }

  /** Wakes the sweep (after an agent's result was applied); runs coalesce. */
  notify(): void {
    if (this.stopped) return;
    if (this.sweeping) {
      this.again = true;
      return;
    }
    this.sweeping = this.sweep()
      .catch((err: unknown) => this.log.error({ err }, 'backup runs sweep failed'))
      .finally(() => {
        this.sweeping = undefined;
        if (this.again) {
          this.again = false;
          this.notify();
        }
      });
  }

  /** Records every ended run, and every run left by a control plane that stopped. */
  async sweep(): Promise<void> {
    const orphans = await this.db.selectFrom('backupRuns').selectAll().where(orphaned).execute();
    // A run this process carries is alive, whatever its heartbeat (one missed while the database was out of reach).
    for (const run of orphans) if (!this.held.has(run.id)) await this.recordOrphan(run);
    const ended = await this.db.selectFrom('backupRuns').select(['id', 'organizationId']).where('status', '=', 'ended').execute();
    // Each organization's runs one after the other, organizations side by side: a destination
    // that does not answer delays only its own organization's records.
    const lanes = new Map<string, string[]>();
    for (const run of ended) {
      const lane = lanes.get(run.organizationId);
      if (lane) lane.push(run.id);
      else lanes.set(run.organizationId, [run.id]);
    }
    await Promise.all(
      [...lanes.values()].map(async (ids) => {
        for (const id of ids) await this.finish(id);
      }),
    );
    await this.prune();
  }

  /** Deletes rows of runs recorded more than RUN_RETENTION_MS ago, at most once an hour, 1 000 at a time. */
  private async prune(): Promise<void> {
    const now = this.deps.clock().getTime();
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    const before = new Date(now - RUN_RETENTION_MS);
    for (;;) {
      const { numDeletedRows } = await this.db
        .deleteFrom('backupRuns')
        .where('id', 'in', (eb) =>
          eb.selectFrom('backupRuns').select('id').where('status', 'in', ['done', 'error']).where('finishedAt', '<', before).limit(1000),
        )
        .executeTakeFirst();
      if (numDeletedRows < 1000n) return;
    }
  }

  /** Ends the heartbeat and waits for the sweep under way; a report applied after this wakes none. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.sweeping) await this.sweeping;
    await Promise.all(this.finishing.values());
  }

  /** Records an ended run (once per process at a time; once overall by the status claim). */
  finish(runId: string): Promise<void> {
    const going = this.finishing.get(runId);
    if (going) return going;
    const done = this.record(runId).finally(() => this.finishing.delete(runId));
    this.finishing.set(runId, done);
    return done;
  }

  private async record(runId: string): Promise<void> {
    const run = await this.db.selectFrom('backupRuns').selectAll().where('id', '=', runId).where('status', '=', 'ended').executeTakeFirst();
    if (!run) return;
    const subject = await this.subjectOf(run);
    const ok = run.succeeded === true;
    const files = ok && run.objectKey ? [run.objectKey] : [];
    let size = 0;
    let verification: PreparedVerification | null = null;
    if (ok && run.objectKey) {
      size = await this.storedSize(subject, run.objectKey);
      if (run.trigger === 'scheduled' && subject.table === 'backups' && this.links.verifications) {
        const backup = await this.db.selectFrom('backups').selectAll().where('id', '=', subject.id).executeTakeFirstOrThrow();
        verification = await this.links.verifications.prepareScheduled(backup, run.objectKey);
      }
    }
    const durationMs = durationOf(run);
    const recorded = await this.db.transaction().execute(async (tx) => {
      const mine = await tx
        .updateTable('backupRuns')
        .set({ status: ok ? 'done' : 'error', size, finishedAt: this.deps.clock() })
        .where('id', '=', run.id)
        .where('status', '=', 'ended')
        .returning('id')
        .executeTakeFirst();
      if (!mine) return false;
      if (ok) await markSuccess(tx, subject, run.startedAt);
      const summary = { ...subject.summary, files, size, durationMs, ...(ok ? {} : { error: run.error }) };
      await recordEvent(tx, { organizationId: run.organizationId, kind: subject.kind, outcome: ok ? 'success' : 'failure', workload: subject.workload, summary });
      if (verification) await this.links.verifications!.insert(tx, verification);
      return true;
    });
    if (!recorded) return;
    if (!ok) this.log.warn({ runId, ...subject.summary, error: run.error }, 'backup failed');
    this.signal.notify();
    if (verification) this.links.verifications!.notify();
  }

  /**
   * The stored object's size, and the retention under the backup's own folder; a bucket that
   * fails, or does not answer within `bucketTimeoutMs`, is logged (size 0), the agent's success stands.
   */
  private async storedSize(subject: Subject, key: string): Promise<number> {
    const buckets = this.links.buckets;
    if (!buckets) return 0;
    const destination = await this.db.selectFrom('destinations').selectAll().where('id', '=', subject.destinationId).executeTakeFirstOrThrow();
    let bucket: Bucket | undefined;
    let givenUp = false;
    const work = (async () => {
      const opened = await buckets.open(buckets.settingsOf(destination));
      if (givenUp) {
        opened.close();
        throw new Error('given up');
      }
      bucket = opened;
      const size = (await bucket.list(key)).find((o) => o.key === key)?.size ?? 0;
      if (subject.keepLatestCount) {
        const own = ownPrefix(subject.prefix, subject.id);
        await bucket.remove(retentionVictims((await bucket.list(own)).map((o) => o.key), own, subject.keepLatestCount));
      }
      return size;
    })();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the bucket did not answer within ${this.bucketTimeoutMs / 1000} s`)), this.bucketTimeoutMs);
    });
    try {
      return await Promise.race([work, late]);
    } catch (err) {
      this.log.warn({ ...subject.summary, err: (err as Error).message }, 'backup size or retention failed');
      return 0;
    } finally {
      clearTimeout(timer);
      givenUp = true;
      work.catch(() => undefined);
      // Closed, its requests in flight end (and a listing stops at its next page).
      (bucket as Bucket | undefined)?.close();
    }
  }

  private async recordOrphan(run: BackupRun): Promise<void> {
    const subject = await this.subjectOf(run);
    const recorded = await this.db.transaction().execute(async (tx) => {
      const mine = await tx
        .updateTable('backupRuns')
        .set({ status: 'error', error: STOPPED_REASON, finishedAt: this.deps.clock() })
        .where('id', '=', run.id)
        .where(orphaned)
        .returning('id')
        .executeTakeFirst();
      if (!mine) return false;
      const summary = { ...subject.summary, files: [], size: 0, durationMs: 0, trigger: run.trigger, error: STOPPED_REASON };
      await recordEvent(tx, { organizationId: run.organizationId, kind: subject.kind, outcome: 'failure', workload: subject.workload, summary });
      return true;
    });
    if (!recorded) return;
    this.log.warn({ runId: run.id, ...subject.summary }, 'backup run lost with its control plane');
    this.signal.notify();
  }

  private async subjectOf(run: BackupRun): Promise<Subject> {
    if (run.backupId) {
      const b = await this.db.selectFrom('backups').selectAll().where('id', '=', run.backupId).executeTakeFirstOrThrow();
      const kind = b.databaseType === 'web-server' ? 'platformBackup' : 'databaseBackup';
      return { table: 'backups', id: b.id, kind, summary: { backupId: b.id }, destinationId: b.destinationId, prefix: b.prefix, keepLatestCount: b.keepLatestCount };
    }
    const v = await this.db.selectFrom('volumeBackups').selectAll().where('id', '=', run.volumeBackupId!).executeTakeFirstOrThrow();
    const app = await this.db.selectFrom('applications').select(['id', 'appName']).where('id', '=', v.applicationId).executeTakeFirst();
    return {
      table: 'volumeBackups',
      id: v.id,
      kind: 'volumeBackup',
      summary: { volumeBackupId: v.id, volumeName: v.volumeName },
      workload: app ? { kind: 'application', id: app.id, name: app.appName } : undefined,
      destinationId: v.destinationId,
      prefix: v.prefix,
      keepLatestCount: v.keepLatestCount,
    };
  }
}

/** A success ends the lapse; a run that started before the last success recorded does not move it back. */
export async function markSuccess(tx: Db, subject: Pick<Subject, 'table' | 'id'>, startedAt: Date): Promise<void> {
  await tx
    .updateTable(subject.table as 'backups')
    .set({ lastSuccessAt: startedAt, staleAlertedAt: null })
    .where('id', '=', subject.id)
    .where((eb) => eb.or([eb('lastSuccessAt', 'is', null), eb('lastSuccessAt', '<=', startedAt)]))
    .execute();
}

const durationOf = (run: BackupRun) => (run.endedAt ? new Date(run.endedAt).getTime() - new Date(run.startedAt).getTime() : 0);

