import type { ColumnType } from 'kysely';
import type { Selectable } from 'kysely';
import type { CreatedAt, JsonOrNull } from './columns.js';

export interface DestinationsTable {
  id: string;
  organizationId: string;
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  /** Encrypted. */
  accessKey: string;
  /** Encrypted; never returned. */
  secretKey: string;
  /** Encrypted; never returned. When set, archives written here are encrypted with it (age, scrypt). */
  encryptionPassphrase: ColumnType<string | null, string | null | undefined, string | null>;
  createdAt: CreatedAt;
}

export interface BackupsTable {
  id: string;
  organizationId: string;
  destinationId: string;
  schedule: string;
  enabled: boolean;
  prefix: string;
  keepLatestCount: number | null;
  database: string;
  databaseType: string;
  backupType: string;
  dbAId: string | null;
  dbBId: string | null;
  dbCId: string | null;
  dbDId: string | null;
  dbEId: string | null;
  composeId: string | null;
  serviceName: string | null;
  userId: string | null;
  includeEncryptionKey: boolean;
  /** Encrypted JSON (it may hold database credentials of a compose backup); null when none. */
  metadata: string | null;
  /** The cron tick the scheduler last claimed for this backup; null before its first scheduled run. */
  lastScheduledAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** When a run of this backup last succeeded; null before the first. */
  lastSuccessAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The lapse (its last success, or its creation) a stale-backup event was sent for; null when none. */
  staleAlertedAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  createdAt: CreatedAt;
}

/** A `backup.restore`: the file, the database service (or compose stack's service) it goes into, and how its command ended. */
export interface DatabaseRestoresTable {
  id: string;
  organizationId: string;
  backupId: string;
  /** The database service restored into; null for a compose backup's restore. */
  databaseServiceId: string | null;
  /** The compose stack and its service restored into (a compose backup's); null otherwise. */
  composeId: ColumnType<string | null, string | null | undefined, string | null>;
  serviceName: ColumnType<string | null, string | null | undefined, string | null>;
  objectKey: string;
  commandId: string;
  status: 'running' | 'done' | 'error';
  /** What the restore reported: its tool's error output when it failed. */
  log: string | null;
  createdAt: CreatedAt;
  finishedAt: Date | null;
}

/** A table of a verified file and its row count (a count may pass 2^53: kept as text). */
export interface VerifiedTable {
  name: string;
  rows: string;
}

/** A `backup.verify`: the file restored in a throw-away container, and what it held. */
export interface BackupVerificationsTable {
  id: string;
  organizationId: string;
  backupId: string;
  objectKey: string;
  commandId: string;
  trigger: 'manual' | 'scheduled';
  status: 'running' | 'done' | 'error';
  /** The tables found, when it ended `done`. */
  tables: JsonOrNull<VerifiedTable[]>;
  error: string | null;
  createdAt: CreatedAt;
  finishedAt: Date | null;
}

/**
 * One run of a backup (of `backups` or of `volume_backups`): `running` while a control plane
 * holds it or its agent command runs, `ended` once the command's result is in (`succeeded`,
 * `error`), `done` or `error` once its event is recorded.
 */
export interface BackupRunsTable {
  id: string;
  organizationId: string;
  backupId: ColumnType<string | null, string | null | undefined, never>;
  volumeBackupId: ColumnType<string | null, string | null | undefined, never>;
  trigger: 'manual' | 'scheduled';
  commandId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The object the agent writes. */
  objectKey: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'running' | 'ended' | 'done' | 'error';
  succeeded: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  /** The stored object's bytes, once recorded. */
  size: ColumnType<number | null, number | null | undefined, number | null>;
  startedAt: Date;
  /** When the agent finished its command. */
  endedAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  heartbeatAt: ColumnType<Date, Date | undefined, Date>;
  finishedAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** The schedule of one named volume of an application (`volumeBackup.*`, beyond the spec). */
export interface VolumeBackupsTable {
  id: string;
  organizationId: string;
  applicationId: string;
  volumeName: string;
  destinationId: string;
  schedule: string;
  enabled: boolean;
  prefix: string;
  keepLatestCount: number | null;
  lastScheduledAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  lastSuccessAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  staleAlertedAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  createdAt: CreatedAt;
}

/** A `volumeBackup.restore`: the file, the volume it went into, and how its command ended. */
export interface VolumeRestoresTable {
  id: string;
  organizationId: string;
  volumeBackupId: string;
  volumeName: string;
  objectKey: string;
  commandId: string;
  status: 'running' | 'done' | 'error';
  log: string | null;
  createdAt: CreatedAt;
  finishedAt: Date | null;
}

export type VolumeBackup = Selectable<VolumeBackupsTable>;
export type VolumeRestore = Selectable<VolumeRestoresTable>;
export type Destination = Selectable<DestinationsTable>;
export type DatabaseRestore = Selectable<DatabaseRestoresTable>;
export type BackupVerification = Selectable<BackupVerificationsTable>;
export type Backup = Selectable<BackupsTable>;
export type BackupRun = Selectable<BackupRunsTable>;
