import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['apps/*/src/**/*.{spec,int.test,e2e.test}.ts', 'libs/*/src/**/*.{spec,int.test,e2e.test}.ts', 'tools/**/*.spec.ts', 'tools/**/*.e2e.test.ts'],
    globalSetup: ['libs/testing/src/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
