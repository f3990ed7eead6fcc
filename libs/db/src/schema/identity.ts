import type { ColumnType, Generated, Selectable } from 'kysely';
import type { CreatedAt, Json, JsonOrNull } from './columns.js';

export interface PermissionsJson {
  accessedProjects: string[];
  accessedEnvironments: string[];
  accessedServices: string[];
  accessedGitProviders: string[];
  accessedServers: string[];
  canCreateProjects: boolean;
  canCreateServices: boolean;
  canDeleteProjects: boolean;
  canDeleteServices: boolean;
  canAccessToContainer: boolean;
  canAccessToProxyFiles: boolean;
  canAccessToAPI: boolean;
  canAccessToSSHKeys: boolean;
  canAccessToGitProviders: boolean;
  canDeleteEnvironments: boolean;
  canCreateEnvironments: boolean;
}

export interface UsersTable {
  id: string;
  email: string;
  name: string;
  lastName: string | null;
  image: string | null;
  isPlatformAdmin: Generated<boolean>;
  defaultOrganizationId: string | null;
  createdAt: CreatedAt;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  logo: string | null;
  defaultRole: string | null;
  /** Sealed token that metrics senders present to notification.receiveNotification. */
  metricsToken: ColumnType<string | null, string | null | undefined, string | null>;
  metricsTokenHash: ColumnType<string | null, string | null | undefined, string | null>;
  ownerId: string;
  /**
   * A platform administrator lets this organization's compose stacks use host privileges
   * (privileged, host namespaces, host paths…) on the platform host (settings.trustOrganization).
   */
  trustedOnPlatformHost: Generated<boolean>;
  createdAt: CreatedAt;
}

export interface MembersTable {
  id: string;
  organizationId: string;
  userId: string;
  role: 'owner' | 'admin' | 'member';
  permissions: Json<PermissionsJson>;
  /**
   * The user acts as platform administrator through this membership (when the user is one):
   * set by first boot and on organizations a platform administrator creates, never by an
   * invitation.
   */
  platformAdmin: Generated<boolean>;
  createdAt: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  userId: string;
  organizationId: string;
  name: string;
  keyHash: string;
  start: string;
  /** What the key may do within the user's access; null: all of it. */
  scope: JsonOrNull<ApiKeyScopeJson>;
  expiresAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Written at most once a minute per key. */
  lastUsedAt: ColumnType<Date | null, Date | null | undefined, Date | null>;
  createdAt: CreatedAt;
}

/** An API key's scope: each list given limits that kind of record to the ids named. */
export interface ApiKeyScopeJson {
  readOnly: boolean;
  projectIds: string[] | null;
  serverIds: string[] | null;
}

export interface InvitationsTable {
  id: string;
  organizationId: string;
  email: string;
  role: 'admin' | 'member';
  tokenHash: string;
  status: 'pending' | 'accepted' | 'canceled';
  inviterId: string;
  /** The account the invitation was made for (who had the email then); null: a new account. */
  inviteeId: ColumnType<string | null, string | null | undefined, string | null>;
  expiresAt: Date;
  createdAt: CreatedAt;
}

export type User = Selectable<UsersTable>;
export type Organization = Selectable<OrganizationsTable>;
export type Member = Selectable<MembersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Invitation = Selectable<InvitationsTable>;
