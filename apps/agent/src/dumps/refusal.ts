import type { DatabaseTarget, S3Object } from '@skiff/proto';

/** Why a DumpDatabase or RestoreDatabase cannot run at all, or null. */
export function refuseDatabaseCommand(target: DatabaseTarget | undefined, object: S3Object | undefined): string | null {
  if (!target?.workload?.appName) return 'the command names no database workload';
  if (!target.database) return 'the command names no database';
  // An option-like name would be read as an option by tools that take the name last.
  if (target.database.startsWith('-')) return 'the database name starts with "-"';
  if (!object?.endpoint || !object.bucket || !object.key) return 'the command names no bucket object';
  return null;
}
