import type { Db } from '@skiff/db';
import { parseCron, previousFire } from '@skiff/domain';
import type { Logger } from 'pino';
import { recordEvent, type EventSignal } from '../events/events.js';
import type { BackupRuns } from './runs.js';

export const DEFAULT_BACKUP_TICK_MS = 15_000;

/** The columns of a scheduled backup (a database's or platform's in `backups`, a volume's in `volume_backups`). */
export interface ScheduledRow {
  id: string;
  organizationId: string;
  schedule: string;
  enabled: boolean;
  createdAt: Date;
  lastScheduledAt: Date | null;
  lastSuccessAt: Date | null;
  staleAlertedAt: Date | null;
}

/** One table of schedules: how a row runs, and the event kind its stale alert is sent as. */
export interface ScheduleSource<R extends ScheduledRow = any> {
  table: 'backups' | 'volumeBackups';
  /** Runs a claimed firing; `runId` is the run row written with the claim (when the scheduler keeps runs). */
  run(row: R, runId?: string): Promise<unknown>;
  staleKind(row: R): 'databaseBackup' | 'platformBackup' | 'volumeBackup';
}

/**
 * Runs each enabled backup at its cron schedule (UTC). Every tick looks at the latest time
 * each schedule fired; a scheduler runs that firing only after claiming it in Postgres (one
 * conditional UPDATE moving `last_scheduled_at` forward), so with several control planes
 * each firing runs once, and after an outage only the latest missed firing runs. A backup
 * never runs for a firing before it was created. Each organization's runs form one lane (one
 * after the other), lanes run side by side, and a new firing of an organization whose lane is
 * still busy is claimed only once it is free.
 *
 * The claim writes the firing's run row (`backup_runs`, runs.ts) in its transaction, so a
 * firing whose control plane stops during its run is not lost: its agent's result is recorded
 * by whichever control plane receives it, and a run that had no command yet is recorded as a
 * failure saying the control plane stopped (each tick sweeps both first).
 *
 * It also watches for stale backups: one that has not succeeded (since its last success, or
 * its creation) within twice its interval (the time between its cron's last two firings)
 * gets one failure event of its kind, `stale: true`, claimed the same way
 * (`stale_alerted_at`), so a lapse is alerted once; a success ends the lapse. The check waits
 * for a firing due now and for a run still going: after an outage the catch-up run decides
 * (its success ends the lapse; its failure is an event of its own, and the stale alert
 * follows it).
 */
export class BackupScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly lanes = new Map<string, Promise<unknown>>();
  private readonly sources: ScheduleSource[];

  constructor(
    private readonly db: Db,
    private readonly clock: () => Date,
    run: (row: any) => Promise<unknown>,
    private readonly log: Logger,
    private readonly tickMs = DEFAULT_BACKUP_TICK_MS,
    more: ScheduleSource[] = [],
    private readonly signal?: EventSignal,
    private readonly runs?: BackupRuns,
  ) {
    const staleKind = (row: { databaseType: string }) => (row.databaseType === 'web-server' ? 'platformBackup' : 'databaseBackup');
    this.sources = [{ table: 'backups', run, staleKind }, ...more];
  }

  /**
   * Claims and runs the due firings; answers the ids of the backups this scheduler ran. With
   * `wait` (tests) it returns when those runs ended; the timer does not wait for them.
   */
  async tick(wait = true): Promise<string[]> {
    // The timer's tick leaves the records to the sweep behind it: a bucket that is slow to
    // answer (a record lists it) must not hold the schedules. `wait` (tests) records them first.
    if (wait) await this.runs?.sweep().catch((err: unknown) => this.log.error({ err }, 'backup runs sweep failed'));
    else this.runs?.notify();
    const ran: string[] = [];
    const launched: Promise<unknown>[] = [];
    // An organization whose runs of an earlier tick still go on claims nothing now.
    const busy = new Set(this.lanes.keys());
    const going = await this.unfinished();
    for (const source of this.sources) {
      const table = source.table as 'backups';
      const rows = (await this.db.selectFrom(table).selectAll().where('enabled', '=', true).execute()) as unknown as ScheduledRow[];
      for (const row of rows) {
        const now = this.clock();
        const schedule = parseCron(row.schedule);
        const due = previousFire(schedule, now);
        if (!due || due < new Date(row.createdAt)) continue;
        const claimable = !(row.lastScheduledAt && new Date(row.lastScheduledAt) >= due) && !busy.has(row.organizationId);
        if (!claimable) {
          if (!going.has(row.id)) await this.alertIfStale(source, row, schedule, due, now);
          continue;
        }
        const runId = await this.claim(source, row, due, now);
        if (runId === null) continue;
        ran.push(row.id);
        if (runId) this.runs!.hold(runId);
        const lane = this.inLane(row.organizationId, async () => {
          // A failed run is recorded in its event by the runner (or from its command's result).
          await source.run(row, runId || undefined).catch((err: unknown) => this.log.debug({ backupId: row.id, err: (err as Error).message }, 'scheduled backup failed'));
          if (runId) this.runs!.release(runId);
        });
        // The lane is free again before the stale check of what the run left.
        launched.push(lane.then(() => this.staleAfterRun(source, row.id, schedule)).catch((err: unknown) => this.log.error({ err }, 'stale backup check failed')));
      }
    }
    if (wait) await Promise.all(launched);
    return ran;
  }

  /** Claims the firing `due` of `row`, with its run row: null when another scheduler has it; '' when no runs are kept. */
  private async claim(source: ScheduleSource, row: ScheduledRow, due: Date, now: Date): Promise<string | null> {
    const table = source.table as 'backups';
    return this.db.transaction().execute(async (tx) => {
      const claimed = await tx
        .updateTable(table)
        .set({ lastScheduledAt: due })
        .where('id', '=', row.id)
        .where((eb) => eb.or([eb('lastScheduledAt', 'is', null), eb('lastScheduledAt', '<', due)]))
        .returning('id')
        .executeTakeFirst();
      if (!claimed) return null;
      if (!this.runs) return '';
      const ref = source.table === 'backups' ? { backupId: row.id } : { volumeBackupId: row.id };
      return this.runs.begin(tx, ref, row.organizationId, 'scheduled', now);
    });
  }

  /** The backups (of either table) with a run still going or whose result is not recorded yet. */
  private async unfinished(): Promise<Set<string>> {
    if (!this.runs) return new Set();
    const rows = await this.db.selectFrom('backupRuns').select(['backupId', 'volumeBackupId']).where('status', 'in', ['running', 'ended']).execute();
    return new Set(rows.map((r) => (r.backupId ?? r.volumeBackupId)!));
  }

  /** The stale check of a backup whose run just ended, on its row as the run left it. */
  private async staleAfterRun(source: ScheduleSource, id: string, schedule: ReturnType<typeof parseCron>): Promise<void> {
    const table = source.table as 'backups';
    const row = (await this.db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst()) as unknown as ScheduledRow | undefined;
    if (!row?.enabled) return;
    const now = this.clock();
    const due = previousFire(schedule, now);
    if (due) await this.alertIfStale(source, row, schedule, due, now);
  }

  /**
   * One organization's runs go one after the other, beside other organizations' runs: a run
   * that waits hours for its agent (or a destination that hangs) delays its own organization only.
   */
  private inLane(organizationId: string, run: () => Promise<unknown>): Promise<unknown> {
    const next = (this.lanes.get(organizationId) ?? Promise.resolve()).then(run).finally(() => {
      if (this.lanes.get(organizationId) === next) this.lanes.delete(organizationId);
    });
    this.lanes.set(organizationId, next);
    return next;
  }

  private async alertIfStale(source: ScheduleSource, row: ScheduledRow, schedule: ReturnType<typeof parseCron>, due: Date, now: Date): Promise<void> {
    if (row.staleAlertedAt) return;
    const before = previousFire(schedule, new Date(due.getTime() - 1000));
    if (!before) return;
    const interval = due.getTime() - before.getTime();
    const since = new Date(row.lastSuccessAt ?? row.createdAt);
    if (now.getTime() - since.getTime() <= 2 * interval) return;
    const table = source.table as 'backups';
    const alerted = await this.db.transaction().execute(async (tx) => {
      const claimed = await tx.updateTable(table).set({ staleAlertedAt: now }).where('id', '=', row.id).where('staleAlertedAt', 'is', null).returning('id').executeTakeFirst();
      if (!claimed) return false;
      const reason = row.lastSuccessAt
        ? `no successful run since ${since.toISOString()} (more than twice its interval of ${Math.round(interval / 60_000)} min)`
        : `no successful run since it was created at ${since.toISOString()} (more than twice its interval of ${Math.round(interval / 60_000)} min)`;
      await recordEvent(tx, { organizationId: row.organizationId, kind: source.staleKind(row), outcome: 'failure', summary: { backupId: row.id, stale: true, lastSuccessAt: row.lastSuccessAt ? since.toISOString() : null, error: reason } });
      return true;
    });
    if (alerted) {
      this.log.warn({ backupId: row.id }, 'backup is stale');
      this.signal?.notify();
    }
  }

  start(): void {
    if (this.timer) return;
    // What a stopped control plane left (results received, runs without their process) is recorded now.
    this.runs?.notify();
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.tick(false)).catch((err: unknown) => this.log.error({ err }, 'backup scheduler tick failed'));
    }, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await Promise.all(this.lanes.values());
    await this.runs?.stop();
  }
}
