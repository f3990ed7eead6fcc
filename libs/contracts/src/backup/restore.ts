import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

export const restore = defineContract({
  method: 'POST',
  summary: 'Restore a file of a database backup into a database service of the same kind',
  description:
    '`key` is one of the backup’s files, as `backup.listBackupFiles` lists them. `databaseId` is the ' +
    'service restored into (default: the backup’s own); it must be of the backup’s kind and running, ' +
    'since the engine’s restore tool runs inside it, and `force` must be true: clients see the restore ' +
    'as it happens. A compose backup restores into the service of its stack it dumps (`serviceName`), which ' +
    'must run; it takes no `databaseId`. PostgreSQL replaces the dump’s objects in one transaction (pg_restore --clean ' +
    '--single-transaction); MariaDB and MySQL run the dump’s SQL; libSQL replaces the database’s whole content in one transaction ' +
    '(its tables, views and triggers dropped, then the dump’s statements; a failure leaves it as it was). Answers the queued restore; ' +
    '`backup.oneRestore` follows it.',
  input: z.object({
    backupId: RequiredId,
    key: z.string().min(1),
    databaseId: RequiredId.nullable().optional(),
    force: z.boolean().optional(),
  }),
  output: z.object({ restoreId: z.string(), commandId: z.string(), status: z.literal('queued') }),
  example: { backupId: 'bkp_example', key: 'nightly/bkp_example/2026-01-01T00-00-00-000Z.dump.gz', force: true },
});
