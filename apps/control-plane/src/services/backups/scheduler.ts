import type { Backup, Db } from '@skiff/db';
import { parseCron, previousFire } from '@skiff/domain';
import type { Logger } from 'pino';

export const DEFAULT_BACKUP_TICK_MS = 15_000;

/**
 * Runs each enabled backup at its cron schedule (UTC). Every tick looks at the latest time
 * each schedule fired; a scheduler runs that firing only after claiming it in Postgres (one
 * conditional UPDATE moving `last_scheduled_at` forward), so with several control planes
 * each firing runs once, and after an outage only the latest missed firing runs. A backup
 * never runs for a firing before it was created.
 */
export class BackupScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly clock: () => Date,
    private readonly run: (row: Backup) => Promise<unknown>,
    private readonly log: Logger,
    private readonly tickMs = DEFAULT_BACKUP_TICK_MS,
  ) {}

  /** Claims and runs the due firings; answers the ids of the backups this scheduler ran. */
  async tick(): Promise<string[]> {
    const now = this.clock();
    const rows = await this.db.selectFrom('backups').selectAll().where('enabled', '=', true).execute();
    const ran: string[] = [];
    for (const row of rows) {
      const due = previousFire(parseCron(row.schedule), now);
      if (!due || due < new Date(row.createdAt)) continue;
      if (row.lastScheduledAt && new Date(row.lastScheduledAt) >= due) continue;
      const claimed = await this.db
        .updateTable('backups')
        .set({ lastScheduledAt: due })
        .where('id', '=', row.id)
        .where((eb) => eb.or([eb('lastScheduledAt', 'is', null), eb('lastScheduledAt', '<', due)]))
        .returning('id')
        .executeTakeFirst();
      if (!claimed) continue;
      ran.push(row.id);
      // A failed run is recorded in its event by the runner.
      await this.run(row).catch((err: unknown) => this.log.debug({ backupId: row.id, err: (err as Error).message }, 'scheduled backup failed'));
    }
    return ran;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.tick()).catch((err: unknown) => this.log.error({ err }, 'backup scheduler tick failed'));
    }, this.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
