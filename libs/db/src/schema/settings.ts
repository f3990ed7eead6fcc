import type { Generated, Selectable } from 'kysely';

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
