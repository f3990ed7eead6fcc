import { describe, expect, it } from 'vitest';
import { ContainerStats, readingOf, type StatsStreams } from './container-stats.js';

const container = { id: 'c1', name: 'shop-web.1.abc', labels: { 'skiff.id': 'app_1', 'com.docker.swarm.service.name': 'shop-web' } };
const doc = (second: number, cpuNs: number, rx: number) => ({
  read: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
  preread: new Date(Date.UTC(2026, 0, 1, 0, 0, second - 1)).toISOString(),
  cpu_stats: { cpu_usage: { total_usage: cpuNs } },
  precpu_stats: { cpu_usage: { total_usage: cpuNs - 5e8 } },
  memory_stats: { usage: 300, limit: 1000, stats: { inactive_file: 100 } },
  networks: { eth0: { rx_bytes: rx, tx_bytes: 0 } },
});

describe('container readings', () => {
  it('CPU of one core, memory without the inactive cache, names from the labels', () => {
    const first = readingOf(container, doc(10, 1e9, 0), null)!;
    // First round: against the engine's previous second (0.5 s of CPU in 1 s).
    expect(first.reading).toMatchObject({ cpuPercent: 50, memoryUsedBytes: 200, memoryLimitBytes: 1000, appName: 'shop-web', workloadId: 'app_1', containerName: 'shop-web.1.abc' });
    // Then against the previous round: 2 s of CPU in 10 s, 10 kB in 10 s.
    const second = readingOf(container, doc(20, 3e9, 10_000), first.point)!;
    expect(second.reading).toMatchObject({ cpuPercent: 20, networkRxBytesPerSecond: 1000 });
  });

  it('a stack container is named by its stack, a stopped container gives no reading', () => {
    const stack = { ...container, labels: { 'com.docker.stack.namespace': 'shop', 'com.docker.swarm.service.name': 'shop_db' } };
    expect(readingOf(stack, doc(10, 1e9, 0), null)!.reading.appName).toBe('shop');
    expect(readingOf(container, { read: '0001-01-01T00:00:00Z' }, null)).toBeNull();
  });

  it('opens one stream per container that appears and closes it when the container goes', async () => {
    let running = [container];
    const opened: string[] = [];
    const closed: string[] = [];
    const lines = new Map<string, (line: string) => void>();
    const streams: StatsStreams = {
      listManaged: async () => running,
      open: async (id, onLine) => {
        opened.push(id);
        lines.set(id, onLine);
        return () => closed.push(id);
      },
      rest: async () => {},
      wake: async () => {},
    };
    const stats = new ContainerStats(streams);
    await stats.sync();
    await stats.sync();
    expect(opened).toEqual(['c1']);
    lines.get('c1')!(JSON.stringify(doc(10, 1e9, 0)));
    expect(stats.sample()).toHaveLength(1);
    // Nothing new from the engine since: no second reading of the same instant.
    expect(stats.sample()).toHaveLength(0);
    running = [];
    await stats.sync();
    expect(closed).toEqual(['c1']);
    expect(stats.open).toBe(0);
  });
});
