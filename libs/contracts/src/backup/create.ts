import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BackupDatabaseType, BackupType, Id, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Schedule backups of a database or of a database inside a compose stack',
  description:
    '`schedule` is a cron expression; `database` the database name to dump; `prefix` the ' +
    'folder inside the destination bucket; `keepLatestCount` N keeps the newest N files of ' +
    'this backup (null or absent: keep all). The target is the one `db*Id` matching ' +
    '`databaseType`, or `composeId` with `serviceName` when `backupType` is compose. ' +
    '`includeEncryptionKey` only concerns `web-server` (platform) backups. ' +
    '`metadata` is any JSON value or null. For `backupType` compose it says how to reach the ' +
    'database inside the stack (service `serviceName`), keyed by `databaseType`: ' +
    '`{"dbA":{"databaseUser"}}`, `{"dbB":{"databaseUser","databasePassword"}}`, ' +
    '`{"dbC":{"databaseRootPassword"}}`, `{"dbD":{"databaseUser","databasePassword"}}`; ' +
    'database backups ignore it.',
  input: z.object({
    schedule: z.string(),
    enabled: z.boolean().nullable().optional(),
    prefix: NonEmpty,
    destinationId: Id,
    keepLatestCount: z.number().nullable().optional(),
    database: NonEmpty,
    dbBId: z.string().nullable().optional(),
    dbCId: z.string().nullable().optional(),
    dbAId: z.string().nullable().optional(),
    dbDId: z.string().nullable().optional(),
    dbEId: z.string().nullable().optional(),
    databaseType: BackupDatabaseType,
    userId: z.string().nullable().optional(),
    backupType: BackupType.optional(),
    composeId: z.string().nullable().optional(),
    serviceName: z.string().nullable().optional(),
    includeEncryptionKey: z.boolean().optional(),
    metadata: z
      .json()
      .nullable()
      .optional()
      .describe('free-form JSON; for compose backups, how to reach the database in the stack'),
  }),
  output: Unspecified,
  example: {
    schedule: '0 3 * * *',
    enabled: true,
    prefix: 'nightly',
    destinationId: 'dst_example',
    keepLatestCount: 7,
    database: 'shop',
    dbAId: 'dba_example',
    databaseType: 'dbA',
    backupType: 'database',
  },
});
