/** Resident memory of another process, read from /proc (the benchmarks'). */
import { readFile } from 'node:fs/promises';

/** A field of /proc/<pid>/status in MB (VmRSS: resident now; VmHWM: its peak). */
export async function statusMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no ${field} for pid ${pid}`);
  return kb / 1024;
}

/** VmRSS in MB. */
export const rssMb = (pid: number) => statusMb(pid, 'VmRSS');

/** The RSS once three samples a second apart agree within 0.5 MB (or the last one after 30 s). */
export async function settledRss(pid: number): Promise<number> {
  const samples: number[] = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    samples.push(await rssMb(pid));
    const last = samples.slice(-3);
    if (last.length === 3 && Math.max(...last) - Math.min(...last) <= 0.5) return last[2]!;
    if (Date.now() > deadline) return samples.at(-1)!;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
