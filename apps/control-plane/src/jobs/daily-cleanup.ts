import type { Logger } from 'pino';
import type { CleanupSchedules } from '../services/host/cleanup-schedules.js';
import type { HostCleanupService } from '../services/host/host-cleanup.js';

/** How often the job looks for due cleanups. */
export const DAILY_CLEANUP_TICK_MS = 60_000;

/**
 * Runs each server's daily container cleanup (settings.cleanAll's set: never volumes) once a
 * day: every tick claims the due servers (CleanupSchedules.claimDue, once across control
 * planes) and cleans them one after another.
 */
export class DailyCleanupJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly schedules: Pick<CleanupSchedules, 'claimDue'>,
    private readonly cleanup: Pick<HostCleanupService, 'run'>,
    private readonly log: Logger,
  ) {}

  start(tickMs = DAILY_CLEANUP_TICK_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass: claims the due servers and cleans them; resolves when done. Answers the servers it ran. */
  async tick(): Promise<string[]> {
    if (this.running) return [];
    const ran: string[] = [];
    const pass = (async () => {
      let due: string[];
      try {
        due = await this.schedules.claimDue();
      } catch (err) {
        this.log.error({ err }, 'could not read the daily cleanup schedules');
        return;
      }
      for (const serverId of due) {
        try {
          await this.cleanup.run(serverId, 'cleanAll', 'daily');
          ran.push(serverId);
        } catch (err) {
          this.log.warn({ serverId, err: (err as Error).message }, 'the daily container cleanup failed; it runs again tomorrow');
        }
      }
    })();
    this.running = pass;
    try {
      await pass;
    } finally {
      this.running = null;
    }
    return ran;
  }
}
