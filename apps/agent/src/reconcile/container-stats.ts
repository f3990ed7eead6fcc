/**
 * Per-container use from the engine's stats streams: one stream per Skiff container,
 * opened when the container appears in a listing and closed when it goes. The engine
 * writes one JSON line a second on each; only the newest line is kept (unparsed), and it
 * is parsed once per sampling round. Between rounds the streams rest (`rest`/`wake`): the
 * lines wait in the sockets and are read at once shortly before the next round.
 */
import { round2 } from './host-stats.js';

export interface ManagedContainer {
  id: string;
  /** Without the leading slash. */
  name: string;
  labels: Record<string, string>;
}

/** The engine side (docker/stats-streams.ts implements it with dockerode). */
export interface StatsStreams {
  /** Running containers labelled `skiff.managed=true`. */
  listManaged(): Promise<ManagedContainer[]>;
  /**
   * Opens a container's stats stream: `onLine` receives the newest complete JSON line of
   * each chunk (as bytes: decoded only when a round reads it), `onEnd` is called once when
   * the stream ends. Answers how to close it.
   */
  open(id: string, onLine: (line: Buffer | string) => void, onEnd: () => void): Promise<() => void>;
  /** Stops reading the open streams (and those opened later) until `wake`; what the engine writes meanwhile waits. */
  rest(): Promise<void>;
  wake(): Promise<void>;
}

export interface ContainerReading {
  at: Date;
  containerName: string;
  appName: string;
  workloadId: string;
  /** Of one core: 200 is two cores busy. */
  cpuPercent: number;
  memoryUsedBytes: number;
  memoryLimitBytes: number;
  networkRxBytesPerSecond: number;
  networkTxBytesPerSecond: number;
}

/** The fields of the engine's stats document that are used. */
interface EngineStats {
  read?: string;
  preread?: string;
  cpu_stats?: { cpu_usage?: { total_usage?: number } };
  precpu_stats?: { cpu_usage?: { total_usage?: number } };
  memory_stats?: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes?: number; tx_bytes?: number }>;
}

interface Point {
  atMs: number;
  cpuNs: number;
  rx: number;
  tx: number;
}

/** A reading from one stats document, and the counters the next one is compared with. */
export function readingOf(container: ManagedContainer, stats: EngineStats, previous: Point | null): { reading: ContainerReading; point: Point } | null {
  const atMs = Date.parse(stats.read ?? '');
  if (!Number.isFinite(atMs) || atMs <= 0) return null; // a stopped container's document
  const cpuNs = stats.cpu_stats?.cpu_usage?.total_usage ?? 0;
  let rx = 0;
  let tx = 0;
  for (const n of Object.values(stats.networks ?? {})) {
    rx += n.rx_bytes ?? 0;
    tx += n.tx_bytes ?? 0;
  }
  // Compared with the previous round, or (first round) with the engine's previous second.
  const before: Point | null =
    previous ??
    (Date.parse(stats.preread ?? '') > 0 ? { atMs: Date.parse(stats.preread!), cpuNs: stats.precpu_stats?.cpu_usage?.total_usage ?? cpuNs, rx, tx } : null);
  const seconds = before ? (atMs - before.atMs) / 1000 : 0;
  const rate = (now: number, then: number) => (seconds > 0 ? round2(Math.max(0, now - then) / seconds) : 0);
  const memory = stats.memory_stats ?? {};
  // What the kernel can drop at once (inactive page cache) is not counted as used, as `docker stats` does.
  const cache = memory.stats?.inactive_file ?? memory.stats?.total_inactive_file ?? 0;
  const labels = container.labels;
  return {
    point: { atMs, cpuNs, rx, tx },
    reading: {
      at: new Date(atMs),
      containerName: container.name,
      appName: labels['com.docker.stack.namespace'] ?? labels['com.docker.compose.project'] ?? labels['com.docker.swarm.service.name'] ?? container.name,
      workloadId: labels['skiff.id'] ?? '',
      cpuPercent: before && seconds > 0 ? round2(Math.max(0, cpuNs - before.cpuNs) / (seconds * 1e7)) : 0,
      memoryUsedBytes: Math.max(0, (memory.usage ?? 0) - cache),
      memoryLimitBytes: memory.limit ?? 0,
      networkRxBytesPerSecond: rate(rx, before?.rx ?? rx),
      networkTxBytesPerSecond: rate(tx, before?.tx ?? tx),
    },
  };
}

interface Tracked {
  container: ManagedContainer;
  close: (() => void) | null;
  line: Buffer | string | null;
  point: Point | null;
  ended: boolean;
}

/** Keeps one stats stream open per running Skiff container. */
export class ContainerStats {
  private readonly tracked = new Map<string, Tracked>();

  constructor(private readonly streams: StatsStreams, private readonly onError: (id: string, err: unknown) => void = () => {}) {}

  /** Containers with an open stream. */
  get open(): number {
    return this.tracked.size;
  }

  /** Opens streams of containers that appeared, closes those of containers that went. */
  async sync(): Promise<void> {
    const running = await this.streams.listManaged();
    const ids = new Set(running.map((c) => c.id));
    for (const [id, t] of this.tracked) {
      if (!ids.has(id) || t.ended) {
        t.close?.();
        this.tracked.delete(id);
      }
    }
    await Promise.all(
      running
        .filter((c) => !this.tracked.has(c.id))
        .map(async (container) => {
          const t: Tracked = { container, close: null, line: null, point: null, ended: false };
          this.tracked.set(container.id, t);
          try {
            t.close = await this.streams.open(container.id, (line) => (t.line = line), () => (t.ended = true));
          } catch (err) {
            this.tracked.delete(container.id);
            this.onError(container.id, err);
          }
        }),
    );
  }

  /** The newest reading of each container that has sent one. */
  sample(): ContainerReading[] {
    const readings: ContainerReading[] = [];
    for (const t of this.tracked.values()) {
      if (t.line === null) continue;
      let stats: EngineStats;
      try {
        stats = JSON.parse(t.line.toString()) as EngineStats;
      } catch {
        continue;
      }
      const next = readingOf(t.container, stats, t.point);
      if (!next) continue;
      if (t.point && next.point.atMs === t.point.atMs) continue; // nothing new since the last round
      t.point = next.point;
      readings.push(next.reading);
    }
    return readings;
  }

  rest(): Promise<void> {
    return this.streams.rest();
  }

  wake(): Promise<void> {
    return this.streams.wake();
  }

  /** Closes every stream. */
  close(): void {
    for (const t of this.tracked.values()) t.close?.();
    this.tracked.clear();
  }
}
