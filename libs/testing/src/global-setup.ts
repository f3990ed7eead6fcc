import type { TestProject } from 'vitest/node';
import { ensureTestPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  project.provide('postgresUrl', await ensureTestPostgres());
}
