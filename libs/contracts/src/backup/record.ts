import { z } from 'zod';
import { BackupDatabaseType, BackupType, Timestamp, JsonValue } from '../primitives.js';

const target = (what: string) => z.string().nullable().describe(what);

/**
 * A backup schedule as responses show it: when it runs, where it writes, and its one
 * target: the `db*Id` matching `databaseType` (a database service of that engine),
 * `composeId` with `serviceName` for a database inside a compose stack, or none for the
 * platform backup (`databaseType` web-server).
 */
export const BackupRecord = z.object({
  backupId: z.string(),
  organizationId: z.string(),
  destinationId: z.string(),
  schedule: z.string().describe('cron expression'),
  enabled: z.boolean(),
  prefix: z.string().describe('folder inside the bucket, normalised: no leading slash, one trailing slash, or empty'),
  keepLatestCount: z.number().int().nullable().describe('newest files of this backup kept; null keeps all'),
  database: z.string().describe('the database name to dump'),
  databaseType: BackupDatabaseType,
  backupType: BackupType,
  dbAId: target('the PostgreSQL database service (dbA)'),
  dbBId: target('the MariaDB database service (dbB)'),
  dbCId: target('the MySQL database service (dbC)'),
  dbDId: target('the MongoDB database service (dbD)'),
  dbEId: target('the libSQL database service (dbE)'),
  composeId: target('the compose stack holding the database (backupType compose)'),
  serviceName: z.string().nullable().describe('the compose service running the database (backupType compose)'),
  userId: z.string().nullable().describe('the member the backup belongs to (its creator unless given)'),
  includeEncryptionKey: z.boolean().describe('web-server backups only: include the platform secret key'),
  metadata: JsonValue.nullable().describe(
    'as given, stored encrypted, except the database passwords (`databasePassword`, `databaseRootPassword`, at any depth): write-only, answered as `hasDatabasePassword: true` / `hasDatabaseRootPassword: true` in their place',
  ),
  createdAt: Timestamp,
});

/** How `backup.create` and `backup.update` document their `metadata` input. */
export const METADATA_INPUT_DOC =
  '`metadata` is any JSON value or null. For `backupType` compose it says how to reach the ' +
  'database inside the stack (service `serviceName`), keyed by `databaseType`: ' +
  '`{"dbA":{"databaseUser"}}`, `{"dbB":{"databaseUser","databasePassword"}}`, ' +
  '`{"dbC":{"databaseRootPassword"}}`, `{"dbD":{"databaseUser","databasePassword"}}`; ' +
  'database backups ignore it. `databasePassword` and `databaseRootPassword` (at any depth) are write-only: answers show ' +
  '`hasDatabasePassword`/`hasDatabaseRootPassword` in their place; `backup.update` keeps a stored one its `metadata` leaves out ' +
  '(at the same place), removes one given as null, and ignores the `has…` flags.';

/** How `backup.create` and `backup.update` describe their `metadata` field. */
export const METADATA_FIELD_DOC = 'free-form JSON; for compose backups, how to reach the database in the stack';
