import type { TestProject } from 'vitest/node';
import { ensureTestNats } from './nats.js';
import { ensureTestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    natsUrl: string;
  }
}

/** Starts the run's PostgreSQL and NATS; the returned teardown stops what this run started. */
export default async function setup(project: TestProject) {
  const [postgres, nats] = await Promise.all([ensureTestPostgres(), ensureTestNats()]);
  project.provide('postgresUrl', postgres.url);
  project.provide('natsUrl', nats.url);
  return async () => {
    await Promise.allSettled([postgres.stop?.(), nats.stop?.()]);
  };
}
