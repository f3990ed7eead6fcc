import type { TestProject } from 'vitest/node';
import { ensureTestNats } from './nats.js';
import { ensureTestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    natsUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const [postgresUrl, natsUrl] = await Promise.all([ensureTestPostgres(), ensureTestNats()]);
  project.provide('postgresUrl', postgresUrl);
  project.provide('natsUrl', natsUrl);
}
