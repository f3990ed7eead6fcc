import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HostStats, parseCpuTicks, parseMemory, parseNetwork } from './host-stats.js';

const stat = (user: number, idle: number) => `cpu  ${user} 0 0 ${idle} 0 0 0 0 0 0\ncpu0 1 2 3 4\nintr 1\n`;
const meminfo = 'MemTotal:        1000 kB\nMemFree:          100 kB\nMemAvailable:     250 kB\n';
const netdev = (rx: number, tx: number) =>
  'Inter-|   Receive                                                |  Transmit\n' +
  ' face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n' +
  `    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0\n` +
  `  eth0: ${rx} 10 0 0 0 0 0 0 ${tx} 10 0 0 0 0 0 0\n` +
  `veth12ab: 5000 1 0 0 0 0 0 0 5000 1 0 0 0 0 0 0\n`;

describe('host readings', () => {
  it('parses busy and total CPU ticks, memory in use and the machine\'s own network bytes', () => {
    expect(parseCpuTicks('cpu  10 2 3 80 5 0 0 0 0 0\n')).toEqual({ busy: 15, total: 100 });
    expect(parseMemory(meminfo)).toEqual({ used: 750 * 1024, total: 1000 * 1024 });
    expect(parseNetwork(netdev(100, 200))).toEqual({ rx: 100, tx: 200 });
  });

  it('turns counters into rates between two readings, and reads the disk of the given path', async () => {
    const proc = mkdtempSync(join(tmpdir(), 'skiff-proc-'));
    mkdirSync(join(proc, 'net'));
    let now = 0;
    const write = (user: number, idle: number, rx: number, tx: number) => {
      writeFileSync(join(proc, 'stat'), stat(user, idle));
      writeFileSync(join(proc, 'meminfo'), meminfo);
      writeFileSync(join(proc, 'net/dev'), netdev(rx, tx));
    };
    const host = new HostStats({ procDir: proc, diskPath: proc, clock: () => new Date(now) });
    write(100, 100, 1000, 2000);
    const first = await host.read();
    expect(first).toMatchObject({ cpuPercent: 0, networkRxBytesPerSecond: 0, memoryUsedBytes: 750 * 1024 });
    expect(first.diskTotalBytes).toBeGreaterThan(0);
    expect(first.diskUsedBytes).toBeGreaterThan(0);
    now = 10_000;
    write(130, 170, 6000, 2500);
    const second = await host.read();
    rmSync(proc, { recursive: true, force: true });
    expect(second).toMatchObject({ cpuPercent: 30, networkRxBytesPerSecond: 500, networkTxBytesPerSecond: 50 });
  });
});
