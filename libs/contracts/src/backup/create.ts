import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BackupDatabaseType, BackupType, Id, NonEmpty, JsonValue, KeepLatestCount } from '../primitives.js';
import { BackupRecord, METADATA_FIELD_DOC, METADATA_INPUT_DOC } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Schedule backups of a database or of a database inside a compose stack',
  description:
    '`database` is the database name to dump; `prefix` the folder inside the destination ' +
    'bucket; `keepLatestCount` N (an integer, at least 1) keeps the newest N files of this ' +
    'backup (null or absent: keep all); `enabled` null or absent means true; `userId` (default: ' +
    'the caller) must be a member of the organization. ' +
    '`databaseType` dbA…dbE names its target by the matching `dbAId`…`dbEId` and no other: ' +
    'the id of a database service of that engine (`dbA.create`…`dbE.create`) of the ' +
    'caller\'s organization, that the caller may see (dbA PostgreSQL, ' +
    'dbB MariaDB, dbC MySQL, dbD MongoDB, dbE libSQL). `backupType` compose names `composeId` ' +
    'and `serviceName` (the service running the database) instead, and no `db*Id`. ' +
    '`databaseType` web-server is the platform backup (its database and proxy ' +
    'configuration): it takes no target and needs the admin role. A missing, extra or unknown ' +
    'target is BAD_REQUEST naming the field; a target the caller may not see is FORBIDDEN. ' +
    '`schedule` is a cron expression (5 fields, or 6 with seconds first; `*`, lists, ranges, ' +
    'steps, month and day names; @hourly, @daily, @weekly, @monthly, @yearly). `prefix` is ' +
    'normalised (trimmed, no leading slash, one trailing slash; `/` alone means the root). ' +
    '`destinationId` is a destination of the caller\'s organization. ' +
    '`includeEncryptionKey` only concerns `web-server` (platform) backups. ' +
    METADATA_INPUT_DOC,
  input: z.object({
    schedule: z.string(),
    enabled: z.boolean().nullable().optional(),
    prefix: NonEmpty,
    destinationId: Id,
    keepLatestCount: KeepLatestCount.nullable().optional(),
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
    metadata: JsonValue.nullable().optional().describe(METADATA_FIELD_DOC),
  }),
  output: BackupRecord,
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
