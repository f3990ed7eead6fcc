// Which test files run two at a time and which one at a time (vitest.config.ts).
//
// vitest gives a run on N cores N - 1 workers: on the 2-core CI machine, one, so every file
// waited for the one before. Files that use nothing the machine shares (pure `*.spec.ts`, and
// `*.int.test.ts` on their own database of the test PostgreSQL, in-process PGlite, ports from
// freePort() and mkdtemp directories) run two at a time. Files that reach the Docker Engine,
// the swarm, the run's NATS, tools/up or fixed /tmp paths, and every end-to-end file, still
// run one at a time, after them: they share engine-wide names and state, and some measure
// the engine's timing.
import { globSync, readFileSync } from 'node:fs';

export const TEST_FILES = [
  'apps/*/src/**/*.{spec,int.test,e2e.test}.ts',
  'libs/*/src/**/*.{spec,int.test,e2e.test}.ts',
  'tools/**/*.spec.ts',
  'tools/**/*.e2e.test.ts',
];

/** Words a test file that reaches something the machine shares cannot avoid. */
const SHARED = /docker|swarm|nats|tools-?up|\/tmp\//i;

/** Whether `file` (its path from the repository's root, and its text) may run beside another file. */
export function runsInParallel(file: string, text: string): boolean {
  if (file.endsWith('.spec.ts')) return true; // pure by convention (CONVENTIONS.md)
  if (file.endsWith('.int.test.ts')) return !SHARED.test(text);
  return false;
}

/** The test files under `root` that may run beside another, as paths from `root`. */
export function parallelFiles(root: string): string[] {
  return globSync(TEST_FILES, { cwd: root, exclude: (name) => name === 'node_modules' })
    .filter((file) => runsInParallel(file, readFileSync(`${root}/${file}`, 'utf8')))
    .sort();
}

/**
 * The files of both groups in one queue for the two workers: the serial ones in vitest's
 * order (slowest first once it knows), the parallel ones spread evenly between them, so
 * that the worker not holding the turn mostly finds a parallel file to run.
 */
export function interleave<T>(serial: T[], parallel: T[]): T[] {
  if (serial.length === 0) return parallel;
  const out: T[] = [];
  serial.forEach((file, i) => {
    out.push(file);
    out.push(...parallel.slice(Math.floor((i * parallel.length) / serial.length), Math.floor(((i + 1) * parallel.length) / serial.length)));
  });
  return out;
}
