import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Json<T> = ColumnType<T, string, string>;

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
  createdAt: CreatedAt;
}

export interface MembersTable {
  id: string;
  organizationId: string;
  userId: string;
  role: 'owner' | 'admin' | 'member';
  permissions: Json<PermissionsJson>;
  createdAt: CreatedAt;
}

export interface ApiKeysTable {
  id: string;
  userId: string;
  organizationId: string;
  name: string;
  keyHash: string;
  start: string;
  createdAt: CreatedAt;
}

export interface InvitationsTable {
  id: string;
  organizationId: string;
  email: string;
  role: 'admin' | 'member';
  tokenHash: string;
  status: 'pending' | 'accepted' | 'canceled';
  inviterId: string;
  expiresAt: Date;
  createdAt: CreatedAt;
}

export interface ProjectsTable {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  /** Encrypted dotenv text. */
  env: string;
  createdAt: CreatedAt;
}

export interface EnvironmentsTable {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  /** Encrypted dotenv text. */
  env: string;
  createdAt: CreatedAt;
}

/** Columns every service table shares; each kind adds its own. */
export interface ServiceColumns {
  id: string;
  environmentId: string;
  name: string;
  appName: string;
  description: string | null;
  serverId: string | null;
  /** Encrypted dotenv text. */
  env: string;
  applicationStatus: Generated<string>;
  createdAt: CreatedAt;
}

export interface ApplicationsTable extends ServiceColumns {
  sourceType: string;
}

export interface ComposeStacksTable extends ServiceColumns {
  sourceType: string;
  composeType: string;
  composeFile: string;
}

export interface CacheInstancesTable extends ServiceColumns {
  containerImage: string;
  /** Encrypted. */
  databasePassword: string;
}

export interface Database {
  users: UsersTable;
  organizations: OrganizationsTable;
  members: MembersTable;
  apiKeys: ApiKeysTable;
  invitations: InvitationsTable;
  projects: ProjectsTable;
  environments: EnvironmentsTable;
  applications: ApplicationsTable;
  composeStacks: ComposeStacksTable;
  cacheInstances: CacheInstancesTable;
}

export type ServiceTable = 'applications' | 'composeStacks' | 'cacheInstances';

export type User = Selectable<UsersTable>;
export type Organization = Selectable<OrganizationsTable>;
export type Member = Selectable<MembersTable>;
export type ApiKey = Selectable<ApiKeysTable>;
export type Invitation = Selectable<InvitationsTable>;
export type Project = Selectable<ProjectsTable>;
export type Environment = Selectable<EnvironmentsTable>;
export type NewProject = Insertable<ProjectsTable>;
export type ProjectUpdate = Updateable<ProjectsTable>;
