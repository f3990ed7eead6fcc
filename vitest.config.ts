import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_FILES, parallelFiles } from './tools/test-groups.js';
import TestOrder from './tools/test-order.js';

// Two workers (vitest's default on 2 cores is one). Files that share the machine (the
// "serial" project, tools/test-groups.ts) take turns, one at a time; the "parallel" ones run
// beside them and beside each other.
const parallel = parallelFiles(import.meta.dirname);
const base = { pool: 'forks', testTimeout: 30_000, hookTimeout: 60_000, maxWorkers: 2 } as const;

export default defineConfig({
  test: {
    globalSetup: ['libs/testing/src/global-setup.ts', 'apps/control-plane/src/testing/migrated-template.ts'],
    ...base,
    sequence: { sequencer: TestOrder },
    projects: [
      { test: { ...base, name: 'parallel', include: parallel } },
      {
        test: {
          ...base,
          name: 'serial',
          include: TEST_FILES,
          exclude: [...configDefaults.exclude, ...parallel],
          setupFiles: ['tools/serial-setup.ts'],
        },
      },
    ],
  },
});
