/**
 * The host's CPU, memory, disk and network use, read from /proc and statfs. Counters
 * (CPU ticks, network bytes) become rates between two readings, so the first reading
 * gives zeros for them.
 */
import { readFile, statfs } from 'node:fs/promises';
import { join } from 'node:path';

export interface HostReading {
  at: Date;
  cpuPercent: number;
  memoryUsedBytes: number;
  memoryTotalBytes: number;
  diskUsedBytes: number;
  diskTotalBytes: number;
  networkRxBytesPerSecond: number;
  networkTxBytesPerSecond: number;
}

export interface CpuTicks {
  busy: number;
  total: number;
}

/** The first `cpu` line of /proc/stat: busy = all but idle and iowait. */
export function parseCpuTicks(stat: string): CpuTicks {
  const line = stat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no cpu line');
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: total - idle, total };
}

/** Memory in use (total less available) and the total, in bytes, from /proc/meminfo. */
export function parseMemory(meminfo: string): { used: number; total: number } {
  const field = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(meminfo);
    return m ? Number(m[1]) * 1024 : null;
  };
  const total = field('MemTotal') ?? 0;
  const available = field('MemAvailable') ?? field('MemFree') ?? 0;
  return { used: Math.max(0, total - available), total };
}

// Loopback, container veths, bridges and overlay tunnels: their traffic is counted again on
// the machine's own interfaces (or never leaves it).
const VIRTUAL_INTERFACE = /^(lo|veth|docker|br-|vx|cali|flannel|tunl|vEthernet)/;

/** Bytes received and sent by the machine's own interfaces, from /proc/net/dev. */
export function parseNetwork(netdev: string): { rx: number; tx: number } {
  let rx = 0;
  let tx = 0;
  for (const line of netdev.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim();
    if (colon < 0 || name === '' || VIRTUAL_INTERFACE.test(name)) continue;
    const fields = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    rx += fields[0] ?? 0;
    tx += fields[8] ?? 0;
  }
  return { rx, tx };
}

export interface HostStatsOptions {
  /** Where /proc is (tests give a fixture directory). Default `/proc`. */
  procDir?: string;
  /** A path on the file system whose use is reported as the disk's (the data directory). */
  diskPath: string;
  clock?: () => Date;
}

/** Reads the host's use; keeps the previous counters to turn them into rates. */
export class HostStats {
  private last: { at: number; cpu: CpuTicks; net: { rx: number; tx: number } } | null = null;
  private readonly procDir: string;
  private readonly clock: () => Date;

  constructor(private readonly o: HostStatsOptions) {
    this.procDir = o.procDir ?? '/proc';
    this.clock = o.clock ?? (() => new Date());
  }

  async read(): Promise<HostReading> {
    const [stat, meminfo, netdev, fs] = await Promise.all([
      readFile(join(this.procDir, 'stat'), 'utf8'),
      readFile(join(this.procDir, 'meminfo'), 'utf8'),
      readFile(join(this.procDir, 'net/dev'), 'utf8'),
      statfs(this.o.diskPath),
    ]);
    const at = this.clock();
    const cpu = parseCpuTicks(stat);
    const net = parseNetwork(netdev);
    const memory = parseMemory(meminfo);
    const previous = this.last;
    this.last = { at: at.getTime(), cpu, net };
    const seconds = previous ? (at.getTime() - previous.at) / 1000 : 0;
    const rate = (now: number, before: number) => (seconds > 0 ? Math.max(0, now - before) / seconds : 0);
    const cpuTotal = previous ? cpu.total - previous.cpu.total : 0;
    return {
      at,
      cpuPercent: previous && cpuTotal > 0 ? round2((100 * Math.max(0, cpu.busy - previous.cpu.busy)) / cpuTotal) : 0,
      memoryUsedBytes: memory.used,
      memoryTotalBytes: memory.total,
      diskUsedBytes: (fs.blocks - fs.bfree) * fs.bsize,
      diskTotalBytes: fs.blocks * fs.bsize,
      networkRxBytesPerSecond: round2(rate(net.rx, previous?.net.rx ?? 0)),
      networkTxBytesPerSecond: round2(rate(net.tx, previous?.net.tx ?? 0)),
    };
  }
}

export const round2 = (n: number) => Math.round(n * 100) / 100;
