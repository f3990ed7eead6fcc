import type { Selectable } from 'kysely';
import type { CreatedAt, Json } from './columns.js';

export type ForgeKind = 'forgeA' | 'forgeB' | 'forgeC' | 'forgeD';

export interface GitProvidersTable {
  /** The forge connection's id (`forgeAId`, …). */
  id: string;
  gitProviderId: string;
  organizationId: string;
  kind: ForgeKind;
  name: string;
  authId: string;
  userId: string;
  config: Json<Record<string, unknown>>;
  /** Encrypted JSON of the connection's secrets. */
  secrets: string;
  createdAt: CreatedAt;
}

export type GitProvider = Selectable<GitProvidersTable>;
