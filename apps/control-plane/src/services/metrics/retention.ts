/** Runs the metrics store's downsampling and deletion every few minutes (idempotent). */
import type { Logger } from 'pino';
import type { MetricsService } from './metrics-service.js';

export class MetricsRetention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly metrics: MetricsService,
    private readonly log: Logger,
    private readonly everyMs = 5 * 60_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.run(), this.everyMs);
    this.timer.unref();
  }

  run(): Promise<void> {
    this.running ??= this.metrics
      .retain()
      .catch((err: unknown) => this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics retention failed; tried again later'))
      .finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
