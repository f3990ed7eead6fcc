import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Json<T> = ColumnType<T, string, string>;
/** A nullable JSON column: optional on insert. */
type JsonOrNull<T> = ColumnType<T | null, string | null | undefined, string | null>;

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

/** Swarm service-spec values, stored as given (validated by the contracts). */
type ClusterJson = JsonOrNull<unknown>;

interface ClusterColumns {
  healthCheckCluster: ClusterJson;
  restartPolicyCluster: ClusterJson;
  placementCluster: ClusterJson;
  updateConfigCluster: ClusterJson;
  rollbackConfigCluster: ClusterJson;
  modeCluster: ClusterJson;
  labelsCluster: ClusterJson;
  networkCluster: ClusterJson;
  stopGracePeriodCluster: ClusterJson;
  endpointSpecCluster: ClusterJson;
  ulimitsCluster: ClusterJson;
}

interface ResourceColumns {
  memoryReservation: string | null;
  memoryLimit: string | null;
  cpuReservation: string | null;
  cpuLimit: string | null;
}

/** Where a service's source comes from: a forge connection or a plain git URL. */
interface SourceColumns {
  repository: string | null;
  owner: string | null;
  branch: string | null;
  forgeAId: string | null;
  triggerType: string | null;
  forgeBId: string | null;
  forgeBRepository: string | null;
  forgeBOwner: string | null;
  forgeBBranch: string | null;
  forgeBPathNamespace: string | null;
  forgeBProjectId: number | null;
  forgeCId: string | null;
  forgeCRepository: string | null;
  forgeCRepositorySlug: string | null;
  forgeCOwner: string | null;
  forgeCBranch: string | null;
  forgeDId: string | null;
  forgeDRepository: string | null;
  forgeDOwner: string | null;
  forgeDBranch: string | null;
  customGitUrl: string | null;
  customGitBranch: string | null;
  customGitSSHKeyId: string | null;
  enableSubmodules: boolean | null;
  autoDeploy: boolean | null;
  watchPaths: JsonOrNull<string[]>;
  /** Encrypted webhook token. */
  refreshToken: string | null;
}

export interface ApplicationsTable extends ServiceColumns, ClusterColumns, ResourceColumns, SourceColumns {
  sourceType: string;
  /** Encrypted (sealed) text: previewEnv, buildArgs, previewBuildArgs; write-only: buildSecrets, previewBuildSecrets, password. */
  previewEnv: string | null;
  buildArgs: string | null;
  buildSecrets: string | null;
  previewBuildArgs: string | null;
  previewBuildSecrets: string | null;
  previewWildcard: string | null;
  previewPath: string | null;
  previewCustomCertResolver: string | null;
  previewCertificateType: string | null;
  title: string | null;
  subtitle: string | null;
  command: string | null;
  buildPath: string | null;
  forgeBBuildPath: string | null;
  forgeCBuildPath: string | null;
  forgeDBuildPath: string | null;
  username: string | null;
  password: string | null;
  containerImage: string | null;
  registryUrl: string | null;
  customGitBuildPath: string | null;
  buildType: string | null;
  containerfile: string | null;
  containerContextPath: string | null;
  containerBuildStage: string | null;
  legacyVersion: string | null;
  packTwoVersion: string | null;
  publishDirectory: string | null;
  dropBuildPath: string | null;
  icon: string | null;
  previewPort: number | null;
  previewLimit: number | null;
  previewHttps: boolean | null;
  isPreviewDeploymentsActive: boolean | null;
  previewRequireCollaboratorPermissions: boolean | null;
  rollbackActive: boolean | null;
  enabled: boolean | null;
  cleanCache: boolean | null;
  createEnvFile: boolean | null;
  isStaticSpa: boolean | null;
  previewLabels: JsonOrNull<string[]>;
  args: JsonOrNull<string[]>;
  replicas: Generated<number>;
}

export interface ComposeStacksTable extends ServiceColumns, SourceColumns {
  sourceType: string;
  composeType: string;
  composeFile: string;
  composePath: string | null;
  command: string | null;
  suffix: string | null;
  randomize: boolean | null;
  isolatedDeployment: boolean | null;
  isolatedDeploymentsVolume: boolean | null;
}

export interface CacheInstancesTable extends ServiceColumns, ClusterColumns, ResourceColumns {
  containerImage: string;
  /** Encrypted. */
  databasePassword: string;
  command: string | null;
  args: JsonOrNull<string[]>;
  externalPort: number | null;
  networkIds: JsonOrNull<string[]>;
  detachPlatformNetwork: boolean | null;
  replicas: Generated<number>;
}

export interface ServersTable {
  id: string;
  organizationId: string;
  name: string;
  address: string;
  description: string | null;
  status: Generated<string>;
  createdAt: CreatedAt;
  /** SHA-256 (hex) of the agent's credential; null until the agent joins. */
  credentialHash: ColumnType<string | null, string | null | undefined, string | null>;
  /** SHA-256 (hex) of the unused one-time join token, and when it expires. */
  joinTokenHash: ColumnType<string | null, string | null | undefined, string | null>;
  joinTokenExpiresAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  joinedAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  /** When the agent was last heard from (written at most once per heartbeat interval). */
  lastSeenAt: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  agentVersion: ColumnType<string | null, string | null | undefined, string | null>;
  dockerVersion: ColumnType<string | null, string | null | undefined, string | null>;
  hostname: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SshKeysTable {
  id: string;
  organizationId: string;
  name: string;
  description: string | null;
  publicKey: string;
  /** Encrypted; never returned. */
  privateKey: string;
  createdAt: CreatedAt;
}

export interface DomainsTable {
  id: string;
  organizationId: string;
  applicationId: string | null;
  composeId: string | null;
  previewDeploymentId: string | null;
  /** The server of the service routed to (null: the control plane's own). */
  serverId: string | null;
  host: string;
  path: string;
  port: number | null;
  https: boolean;
  certificateType: string;
  customEntrypoint: string | null;
  customCertResolver: string | null;
  serviceName: string | null;
  domainType: string;
  internalPath: string | null;
  stripPath: boolean;
  middlewares: JsonOrNull<string[]>;
  forwardAuthEnabled: boolean;
  enabled: boolean;
  createdAt: CreatedAt;
}

export interface PreviewDeploymentsTable {
  id: string;
  applicationId: string;
  appName: string;
  branch: string;
  pullRequestId: string;
  pullRequestNumber: string;
  pullRequestUrl: string;
  pullRequestTitle: string;
  previewStatus: Generated<string>;
  createdAt: CreatedAt;
}

export interface SecurityEntriesTable {
  id: string;
  applicationId: string;
  username: string;
  /** bcrypt. */
  passwordHash: string;
  createdAt: CreatedAt;
}

export interface CertificatesTable {
  id: string;
  organizationId: string;
  serverId: string | null;
  name: string;
  certificateData: string;
  /** Encrypted; never returned. */
  privateKey: string;
  certificatePath: string;
  autoRenew: boolean | null;
  subject: string;
  issuer: string;
  subjectNames: Json<string[]>;
  notBefore: Date;
  expiresAt: Date;
  fingerprint: string;
  createdAt: CreatedAt;
}

export type NotificationKind = 'hook' | 'messenger' | 'community' | 'email' | 'push';

export interface NotificationsTable {
  id: string;
  organizationId: string;
  name: string;
  kind: NotificationKind;
  /** The channel record's id (`hookId`, `messengerId`, …). */
  channelId: string;
  flags: Json<Record<string, boolean>>;
  /** The channel's settings that are not secret. */
  config: Json<Record<string, unknown>>;
  /** Encrypted JSON of the channel's secret settings. */
  secrets: string;
  createdAt: CreatedAt;
}

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
  createdAt: CreatedAt;
}

export interface AiConfigsTable {
  id: string;
  organizationId: string;
  name: string;
  apiUrl: string;
  /** Encrypted; never returned. */
  apiKey: string;
  model: string;
  isEnabled: boolean;
  createdAt: CreatedAt;
}

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

export type DeploymentStatus = 'queued' | 'running' | 'done' | 'error' | 'cancelled';

/** One deploy of an application: its status, timestamps and the tail of its log. */
export interface DeploymentsTable {
  id: string;
  /** The workload deployed: exactly one of applicationId and composeId is set. */
  applicationId: string | null;
  composeId: ColumnType<string | null, string | null | undefined, string | null>;
  /** The server id on the agent channel: a server record's id, or 'local' (the platform host). */
  serverId: string;
  status: ColumnType<DeploymentStatus, DeploymentStatus | undefined, DeploymentStatus>;
  title: string | null;
  description: string | null;
  /** The newest log lines, capped. */
  log: Generated<string>;
  reason: string | null;
  /** The highest event sequence applied (events at or below it are duplicates). */
  lastSequence: Generated<number>;
  createdAt: CreatedAt;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export type CommandRowStatus = 'pending' | 'published' | 'done' | 'failed';

/** The outbox: a command for a server's agent, written with the change it carries out. */
export interface CommandsTable {
  /** The Command's commandId (also the JetStream message id). */
  id: string;
  /** Creation order (identity). */
  position: ColumnType<string, never, never>;
  serverId: string;
  /** The CommandKind's name, e.g. COMMAND_KIND_DEPLOY_APPLICATION. */
  kind: string;
  workloadKey: string;
  deploymentId: string | null;
  /** The encoded Command, base64, sealed with the platform key. */
  payload: string;
  status: ColumnType<CommandRowStatus, CommandRowStatus | undefined, CommandRowStatus>;
  attempts: Generated<number>;
  deadline: Date;
  createdAt: CreatedAt;
  publishedAt: Date | null;
  finishedAt: Date | null;
  resultReason: string | null;
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
  servers: ServersTable;
  sshKeys: SshKeysTable;
  domains: DomainsTable;
  previewDeployments: PreviewDeploymentsTable;
  securityEntries: SecurityEntriesTable;
  certificates: CertificatesTable;
  notifications: NotificationsTable;
  destinations: DestinationsTable;
  backups: BackupsTable;
  aiConfigs: AiConfigsTable;
  gitProviders: GitProvidersTable;
  platformSettings: PlatformSettingsTable;
  deployments: DeploymentsTable;
  commands: CommandsTable;
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
export type Application = Selectable<ApplicationsTable>;
export type ComposeStack = Selectable<ComposeStacksTable>;
export type CacheInstance = Selectable<CacheInstancesTable>;
export type Server = Selectable<ServersTable>;
export type SshKey = Selectable<SshKeysTable>;
export type Domain = Selectable<DomainsTable>;
export type PreviewDeployment = Selectable<PreviewDeploymentsTable>;
export type SecurityEntry = Selectable<SecurityEntriesTable>;
export type Certificate = Selectable<CertificatesTable>;
export type Notification = Selectable<NotificationsTable>;
export type Destination = Selectable<DestinationsTable>;
export type Backup = Selectable<BackupsTable>;
export type AiConfig = Selectable<AiConfigsTable>;
export type GitProvider = Selectable<GitProvidersTable>;
export type PlatformSettings = Selectable<PlatformSettingsTable>;
export type Deployment = Selectable<DeploymentsTable>;
export type CommandRow = Selectable<CommandsTable>;

/** An archive uploaded for a `drop` application; the file is `<dataDir>/archives/<id>`. */
export interface ApplicationArchivesTable {
  id: string;
  applicationId: string;
  format: 'zip' | 'tar.gz';
  /** Bytes as uploaded (int8: a string from Postgres, a number from PGlite). */
  size: ColumnType<string | number, number, never>;
  /** SHA-256 as uploaded, lowercase hex. */
  sha256: string;
  createdAt: CreatedAt;
}

// Declaration merging keeps this addition at the end of the file.
export interface Database {
  applicationArchives: ApplicationArchivesTable;
}

export type ApplicationArchive = Selectable<ApplicationArchivesTable>;

/** The revision of a server's proxy configuration (ApplyProxyConfig.revision). */
export interface ProxyRevisionsTable {
  /** The wire server id (`local` for the platform host). */
  serverId: string;
  /** int8: a string from Postgres, a number from PGlite. */
  revision: ColumnType<string | number, number, number>;
}

// Declaration merging keeps this addition at the end of the file.
export interface Database {
  proxyRevisions: ProxyRevisionsTable;
}
