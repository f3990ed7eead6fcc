import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_FILES, parallelFiles } from './tools/test-groups.js';

// Two groups, one after the other (tools/test-groups.ts says which file goes where).
const parallel = parallelFiles(import.meta.dirname);

export default defineConfig({
  test: {
    globalSetup: ['libs/testing/src/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'parallel', include: parallel, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: { name: 'serial', include: TEST_FILES, exclude: [...configDefaults.exclude, ...parallel], maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
