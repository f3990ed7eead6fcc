/**
 * The server's build cap: every BuildKit step the engine runs (`RUN` of a containerfile or
 * static-site build) lives in one cgroup, `<engine cgroup parent>/buildkit` (`docker/buildkit`
 * with the cgroupfs driver), so a memory and CPU limit written there holds all builds of
 * the server together, and what is left of the machine stays with the running services.
 * The engine's BuildKit ignores `docker build --memory`/`--cgroup-parent`, hence the parent
 * cgroup. Written before each build (the engine recreates the directory when it restarts).
 *
 * A build that failed while the memory limit was hit (cgroup v1 `memory(.memsw).failcnt`, v2
 * `memory.events` max/oom_kill rose during it) ends with the cap as its reason.
 *
 * The builder programs themselves (the docker CLI, nixpacks, railpack, pack) run in a child
 * of that cgroup, `<cgroup>/skiff-builders` (v2 allows no process in a cgroup whose children
 * have controllers), so what they do outside BuildKit counts against the same cap.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface BuildCapSettings {
  /** CPUs all builds together may use (fractions allowed); 0: no CPU cap. */
  cpus: number;
  /** Bytes of memory all builds together may use; 0: no memory cap. */
  memoryBytes: number;
  /** The engine's BuildKit cgroup, relative to the cgroup mount (SKIFF_BUILD_CGROUP). */
  cgroup: string;
  /** Where the cgroup filesystem is mounted; default /sys/fs/cgroup. */
  cgroupRoot?: string;
}

export const DEFAULT_BUILD_MEMORY = 2 * 1024 ** 3;
export const BUILDERS_CGROUP = 'skiff-builders';
const CFS_PERIOD = 100_000;

export class BuildCap {
  private readonly root: string;
  private readonly v2: boolean;

  constructor(readonly settings: BuildCapSettings) {
    this.root = settings.cgroupRoot ?? '/sys/fs/cgroup';
    this.v2 = existsSync(join(this.root, 'cgroup.controllers'));
  }

  /** What the cap is, as the build log says it. */
  describe(): string {
    const parts = [];
    if (this.settings.memoryBytes > 0) parts.push(`${formatBytes(this.settings.memoryBytes)} of memory`);
    if (this.settings.cpus > 0) parts.push(`${this.settings.cpus} CPU${this.settings.cpus === 1 ? '' : 's'}`);
    return parts.length > 0 ? parts.join(' and ') : 'none';
  }

  /** Writes the limits; answers why they could not be written, or null. */
  async apply(): Promise<string | null> {
    try {
      if (this.v2) await this.applyV2();
      else await this.applyV1();
      return null;
    } catch (err) {
      return `the build cap could not be set on cgroup ${this.settings.cgroup}: ${(err as Error).message}`;
    }
  }

  /**
   * Makes the builders' cgroup under the cap; answers the `cgroup.procs` files a builder
   * process writes its pid to (one per controller on v1), or why it could not.
   */
  async builderCgroup(): Promise<{ procs: string[] } | { problem: string }> {
    try {
      if (!this.v2) {
        const procs = [];
        for (const controller of ['memory', 'cpu']) {
          const dir = join(this.root, controller, this.settings.cgroup, BUILDERS_CGROUP);
          await mkdir(dir, { recursive: true });
          procs.push(join(dir, 'cgroup.procs'));
        }
        return { procs };
      }
      const parent = join(this.root, this.settings.cgroup);
      const enabled = (await readFile(join(parent, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
      const wanted = ['memory', 'cpu'].filter((c) => !enabled.includes(c));
      if (wanted.length > 0) await writeFile(join(parent, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
      const dir = join(parent, BUILDERS_CGROUP);
      await mkdir(dir, { recursive: true });
      return { procs: [join(dir, 'cgroup.procs')] };
    } catch (err) {
      return { problem: `the builder programs cannot run in the build cap's cgroup ${this.settings.cgroup}: ${(err as Error).message}` };
    }
  }

  /** How often the memory limit was hit so far; null when it cannot be read. */
  async memoryHits(): Promise<number | null> {
    try {
      if (!this.v2) {
        // The memory+swap limit is hit first when there is no swap: both counters count.
        let hits = 0;
        for (const name of ['memory.failcnt', 'memory.memsw.failcnt']) {
          const file = this.file('memory', name);
          if (existsSync(file)) hits += Number((await readFile(file, 'utf8')).trim());
        }
        return hits;
      }
      const events = await readFile(this.file('', 'memory.events'), 'utf8');
      let hits = 0;
      for (const line of events.split('\n')) {
        const [key, value] = line.split(' ');
        if (key === 'max' || key === 'oom_kill') hits += Number(value);
      }
      return hits;
    } catch {
      return null;
    }
  }

  /** The reason of a build that failed with the memory limit hit. */
  memoryReason(): string {
    return `the build used more than ${formatBytes(this.settings.memoryBytes)} of memory (the server's build cap, SKIFF_BUILD_MEMORY)`;
  }

  private file(controller: string, name: string): string {
    return join(this.root, controller, this.settings.cgroup, name);
  }

  private async applyV1(): Promise<void> {
    const { memoryBytes, cpus } = this.settings;
    await mkdir(join(this.root, 'memory', this.settings.cgroup), { recursive: true });
    await mkdir(join(this.root, 'cpu', this.settings.cgroup), { recursive: true });
    const limit = memoryBytes > 0 ? String(memoryBytes) : '-1';
    const memsw = this.file('memory', 'memory.memsw.limit_in_bytes');
    const current = Number((await readFile(this.file('memory', 'memory.limit_in_bytes'), 'utf8')).trim());
    // memory+swap may never be below memory: raise it first, lower it last.
    const raising = memoryBytes <= 0 || memoryBytes > current;
    if (raising && existsSync(memsw)) await writeFile(memsw, limit);
    await writeFile(this.file('memory', 'memory.limit_in_bytes'), limit);
    if (!raising && existsSync(memsw)) await writeFile(memsw, limit);
    await writeFile(this.file('cpu', 'cpu.cfs_period_us'), String(CFS_PERIOD));
    await writeFile(this.file('cpu', 'cpu.cfs_quota_us'), cpus > 0 ? String(Math.max(1000, Math.round(cpus * CFS_PERIOD))) : '-1');
  }

  private async applyV2(): Promise<void> {
    const { memoryBytes, cpus } = this.settings;
    await mkdir(join(this.root, this.settings.cgroup), { recursive: true });
    await writeFile(this.file('', 'memory.max'), memoryBytes > 0 ? String(memoryBytes) : 'max');
    if (memoryBytes > 0 && existsSync(this.file('', 'memory.swap.max'))) await writeFile(this.file('', 'memory.swap.max'), '0');
    await writeFile(this.file('', 'cpu.max'), `${cpus > 0 ? Math.max(1000, Math.round(cpus * CFS_PERIOD)) : 'max'} ${CFS_PERIOD}`);
  }
}

/** `2 GiB`, `512 MiB`, `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}
