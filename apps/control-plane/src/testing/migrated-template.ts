// Global setup: one database of the test PostgreSQL migrated once for the whole run, that
// startTestPlatform copies (CREATE DATABASE … TEMPLATE) instead of migrating an empty one
// for each platform; the platform's own migrateToLatest then finds nothing to do.
import { migrateToLatest, openDatabase } from '@skiff/db';
import { freshDatabase } from '@skiff/testing';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database startTestPlatform copies. */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  const template = await freshDatabase(project.getProvidedContext().postgresUrl);
  const handle = await openDatabase({ url: template.url, poolSize: 1 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  project.provide('postgresTemplate', new URL(template.url).pathname.slice(1));
  // Gone already when the test PostgreSQL was (another run's, which it stopped first).
  return () => template.drop().catch(() => {});
}
