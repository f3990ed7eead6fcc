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

export class MetricsSampler {
  private readonly containers: ContainerStats;
  private timer: NodeJS.Timeout | null = null;
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
      if (!this.running) this.running = this.round().then(
        () => {},
        () => {},
      ).finally(() => (this.running = null));
    }, this.o.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
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
