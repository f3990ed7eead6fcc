/**
 * The metrics sampler (ARCHITECTURE.md "Metrics and events"): every interval it brings the
 * container stats streams in line with the running Skiff containers, reads the host and
 * the newest stats of each container, and sends the round to the control plane. A round
 * that cannot be sent is dropped (a gap), so nothing accumulates while the control plane
 * is away.
 */
import { type ContainerSample, type HostSample, type MetricsBatch, timestampFromDate } from '@skiff/proto';
import type { Logger } from 'pino';
import { ContainerStats, type ContainerReading, type StatsStreams } from './container-stats.js';
import type { HostReading, HostStats } from './host-stats.js';

export interface MetricsSamplerOptions {
  host: Pick<HostStats, 'read'>;
  streams: StatsStreams;
  send: (batch: MetricsBatch) => Promise<void>;
  intervalMs: number;
  log: Logger;
}

/** How long before a round the container streams wake to read what waited in their sockets. */
export const WAKE_LEAD_MS = 500;

export class MetricsSampler {
  private readonly containers: ContainerStats;
  private timer: NodeJS.Timeout | null = null;
  private wakeTimer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private failures = 0;

  constructor(private readonly o: MetricsSamplerOptions) {
    this.containers = new ContainerStats(o.streams, (id, err) =>
      o.log.debug({ containerId: id, err: err instanceof Error ? err.message : String(err) }, 'could not open a container stats stream'),
    );
  }

  start(): void {
    if (this.timer) return;
    // Streams open and the host's counters are read at once, so the first round already has
    // the containers' readings and the host's rates.
    void this.containers.sync().catch(() => {});
    void this.o.host.read().catch(() => {});
    this.timer = setInterval(() => {
      const next = Date.now() + this.o.intervalMs;
      if (!this.running) this.running = this.round().then(
        () => {},
        () => {},
      ).finally(() => {
        this.running = null;
        this.restUntil(next - WAKE_LEAD_MS);
      });
    }, this.o.intervalMs);
    this.timer.unref();
  }

  /**
   * Between rounds the streams are not read: the engine's lines (one a second each) wait in
   * the sockets, and are read in one go shortly before the next round, which then has a line
   * at most a second and a half old. This turns ten reads a round per container into one or two.
   */
  private restUntil(wakeAt: number): void {
    if (!this.timer || this.o.intervalMs < 3 * WAKE_LEAD_MS) return;
    const delay = wakeAt - Date.now();
    if (delay <= 0) return;
    void this.containers.rest().catch(() => {});
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = setTimeout(() => void this.containers.wake().catch(() => {}), delay);
    this.wakeTimer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.timer = null;
    this.wakeTimer = null;
    await this.running;
    this.containers.close();
  }

  /** One sampling round; also called by tests. */
  async round(): Promise<MetricsBatch> {
    const [host] = await Promise.all([
      this.o.host.read().catch((err: unknown) => {
        this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read the host metrics');
        return null;
      }),
      this.containers.sync().catch((err: unknown) => {
        this.o.log.debug({ err: err instanceof Error ? err.message : String(err) }, 'could not list the containers for metrics');
      }),
    ]);
    const batch: MetricsBatch = { hosts: host ? [hostSample(host)] : [], containers: this.containers.sample().map(containerSample) };
    try {
      await this.o.send(batch);
      if (this.failures > 0) this.o.log.info({ rounds: this.failures }, 'metrics delivered again after rounds lost');
      this.failures = 0;
    } catch (err) {
      // Said once per outage, not once per round.
      if (this.failures++ === 0) this.o.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'metrics not delivered: rounds are dropped until the control plane answers');
    }
    return batch;
  }
}

function hostSample(h: HostReading): HostSample {
  return {
    at: timestampFromDate(h.at),
    cpuPercent: h.cpuPercent,
    memoryUsedBytes: h.memoryUsedBytes,
    memoryTotalBytes: h.memoryTotalBytes,
    diskUsedBytes: h.diskUsedBytes,
    diskTotalBytes: h.diskTotalBytes,
    networkRxBytesPerSecond: h.networkRxBytesPerSecond,
    networkTxBytesPerSecond: h.networkTxBytesPerSecond,
  };
}

function containerSample(c: ContainerReading): ContainerSample {
  return { ...c, at: timestampFromDate(c.at) };
}
