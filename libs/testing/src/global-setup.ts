import type { TestProject } from 'vitest/node';
import { ensureTestNats } from './nats.js';
import { ensureTestPostgres } from './postgres.js';
import { startTurnServer } from './turns.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    natsUrl: string;
    /** Where the files that share the machine take their turns (turns.ts). */
    turnSocket: string;
  }
}

/** Starts the run's PostgreSQL, NATS and turn server; the returned teardown stops what this run started. */
export default async function setup(project: TestProject) {
  const [postgres, nats, turns] = await Promise.all([ensureTestPostgres(), ensureTestNats(), startTurnServer()]);
  project.provide('postgresUrl', postgres.url);
  project.provide('natsUrl', nats.url);
  project.provide('turnSocket', turns.path);
  return async () => {
    await Promise.allSettled([postgres.stop?.(), nats.stop?.(), turns.close()]);
  };
}
