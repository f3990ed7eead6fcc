import type { ColumnType, Generated, Selectable } from 'kysely';

/** The host settings (`settings.*`): a single row, id `platform`. */
export interface PlatformSettingsTable {
  id: string;
  /** The platform's own domain (settings.assignDomainServer); null until assigned. */
  host: string | null;
  certificateType: Generated<'acme' | 'none' | 'custom'>;
  letsEncryptEmail: string | null;
  https: Generated<boolean>;
  enableContainerCleanup: Generated<boolean>;
  /** Encrypted; never returned. */
  sshPrivateKey: string | null;
  /** The private key's public half, as an authorized_keys line. */
  sshPublicKey: string | null;
  updatedAt: Date | null;
}

export type PlatformSettings = Selectable<PlatformSettingsTable>;

/** The daily container cleanup of one server (`server_id`: a server's id, or `local`). */
export interface CleanupSchedulesTable {
  serverId: string;
  enabled: Generated<boolean>;
  /** When a scheduler last claimed its run; null: never ran. */
  lastRunAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  updatedAt: Generated<Date>;
}

export type CleanupSchedule = Selectable<CleanupSchedulesTable>;
