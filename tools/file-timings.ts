// A vitest reporter: how long each test file held its worker, hooks, imports and setup
// included (the JSON report's per-file times count only the tests themselves). Writes the
// table, slowest first, to .tmp/file-timings.tsv (or SKIFF_FILE_TIMINGS) and prints the
// slowest files. Usage: npx vitest run --reporter=default --reporter=./tools/file-timings.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

export type FileTiming = {
  file: string;
  /** From the file being handed to a worker to its last hook, in seconds, less its setup files (where a file waits for its turn, libs/testing/src/turns.ts). */
  wall: number;
  /** Tests and hooks. */
  run: number;
  /** Importing the file and what it imports, and running its describe callbacks. */
  collect: number;
  /** Setup files (waiting for the turn included), environment, the runner. */
  setup: number;
  tests: number;
  /** When it ended, in seconds from the first file's start. */
  end: number;
};

const seconds = (ms: number) => Math.round(ms) / 1000;

export function timingTable(rows: FileTiming[]): string {
  const header = 'wall_s\trun_s\tcollect_s\tsetup_s\ttests\tend_s\tfile';
  const lines = rows.map((r) => [r.wall, r.run, r.collect, r.setup, r.tests, r.end, r.file].join('\t'));
  return [header, ...lines].join('\n') + '\n';
}

export default class FileTimings implements Reporter {
  private readonly queuedAt = new Map<string, number>();
  private readonly rows: FileTiming[] = [];
  private firstQueued: number | null = null;

  private readonly out: string;
  private readonly print: number;

  constructor(options: { out?: string; print?: number } = {}) {
    this.out = options.out ?? process.env.SKIFF_FILE_TIMINGS ?? '.tmp/file-timings.tsv';
    this.print = options.print ?? 15;
  }

  onTestModuleQueued(module: TestModule) {
    const now = performance.now();
    this.firstQueued ??= now;
    this.queuedAt.set(module.moduleId, now);
  }

  onTestModuleEnd(module: TestModule) {
    const d = module.diagnostic();
    const queued = this.queuedAt.get(module.moduleId);
    const now = performance.now();
    const parts = d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.duration;
    this.rows.push({
      file: relative(process.cwd(), module.moduleId),
      wall: seconds(queued === undefined ? parts : now - queued - d.setupDuration),
      run: seconds(d.duration),
      collect: seconds(d.collectDuration),
      setup: seconds(d.environmentSetupDuration + d.prepareDuration + d.setupDuration),
      tests: [...module.children.allTests()].length,
      end: seconds(now - (this.firstQueued ?? now)),
    });
  }

  onTestRunEnd() {
    if (this.rows.length === 0) return;
    this.rows.sort((a, b) => b.wall - a.wall);
    mkdirSync(dirname(this.out), { recursive: true });
    writeFileSync(this.out, timingTable(this.rows));
    if (this.print <= 0) return;
    const total = this.rows.reduce((s, r) => s + r.wall, 0);
    console.log(`\nslowest test files (seconds from start to last hook, imports included, a wait for the turn not; ${Math.round(total)} s over ${this.rows.length} files; all in ${this.out}):`);
    for (const r of this.rows.slice(0, this.print)) console.log(`  ${r.wall.toFixed(1).padStart(7)}  ${r.file}`);
  }
}
