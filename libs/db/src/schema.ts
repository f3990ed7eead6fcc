// The Kysely types of every table, one file per capability under schema/; this file assembles
// the Database interface and re-exports each capability's types.
import type { ApiKeysTable, InvitationsTable, MembersTable, OrganizationsTable, UsersTable } from './schema/identity.js';
import type { EnvironmentsTable, ProjectsTable } from './schema/projects.js';
import type {
  ApplicationArchivesTable,
  ApplicationMountsTable,
  ApplicationsTable,
  DeploymentsTable,
  PreviewDeploymentsTable,
  SecurityEntriesTable,
} from './schema/applications.js';
import type { ComposeStacksTable } from './schema/compose.js';
import type { CacheInstancesTable } from './schema/caches.js';
import type { DatabaseServicesTable } from './schema/databases.js';
import type { CertificatesTable, DomainsTable, ProxyRevisionsTable } from './schema/domains.js';
import type { BackupRunsTable, BackupVerificationsTable, BackupsTable, DatabaseRestoresTable, DestinationsTable, VolumeBackupsTable, VolumeRestoresTable } from './schema/backups.js';
import type { NotificationsTable } from './schema/notifications.js';
import type { CommandsTable, RemovedServersTable, ServersTable, SshKeysTable } from './schema/servers.js';
import type { GitProvidersTable } from './schema/forges.js';
import type { AiConfigsTable } from './schema/ai.js';
import type { CleanupSchedulesTable, PlatformSettingsTable } from './schema/settings.js';
import type { AuditEventsTable } from './schema/audit.js';
import type { BillingAccountsTable, BillingEventsTable } from './schema/billing.js';
import type { EventDeliveriesTable, EventPruneMarksTable, EventsTable } from './schema/events.js';
import type { WebhookDeliveriesTable, WebhookSeenTable } from './schema/webhooks.js';
import type { ContainerMetricsTable, HostMetricsTable, ServerMetricThresholdsTable } from './schema/metrics.js';

export type { ServiceColumns, SourceColumns } from './schema/columns.js';
export type * from './schema/identity.js';
export type * from './schema/projects.js';
export type * from './schema/applications.js';
export type * from './schema/compose.js';
export type * from './schema/caches.js';
export type * from './schema/databases.js';
export type * from './schema/domains.js';
export type * from './schema/backups.js';
export type * from './schema/notifications.js';
export type * from './schema/servers.js';
export type * from './schema/forges.js';
export type * from './schema/ai.js';
export type * from './schema/settings.js';
export type * from './schema/audit.js';
export type * from './schema/billing.js';
export type * from './schema/events.js';
export type * from './schema/metrics.js';
export type * from './schema/webhooks.js';

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
  databaseServices: DatabaseServicesTable;
  servers: ServersTable;
  removedServers: RemovedServersTable;
  billingAccounts: BillingAccountsTable;
  billingEvents: BillingEventsTable;
  sshKeys: SshKeysTable;
  domains: DomainsTable;
  previewDeployments: PreviewDeploymentsTable;
  securityEntries: SecurityEntriesTable;
  certificates: CertificatesTable;
  notifications: NotificationsTable;
  destinations: DestinationsTable;
  backups: BackupsTable;
  databaseRestores: DatabaseRestoresTable;
  backupVerifications: BackupVerificationsTable;
  backupRuns: BackupRunsTable;
  volumeBackups: VolumeBackupsTable;
  volumeRestores: VolumeRestoresTable;
  aiConfigs: AiConfigsTable;
  gitProviders: GitProvidersTable;
  platformSettings: PlatformSettingsTable;
  cleanupSchedules: CleanupSchedulesTable;
  deployments: DeploymentsTable;
  commands: CommandsTable;
  auditEvents: AuditEventsTable;
  events: EventsTable;
  eventDeliveries: EventDeliveriesTable;
  eventPruneMarks: EventPruneMarksTable;
  applicationArchives: ApplicationArchivesTable;
  applicationMounts: ApplicationMountsTable;
  proxyRevisions: ProxyRevisionsTable;
  hostMetrics: HostMetricsTable;
  containerMetrics: ContainerMetricsTable;
  serverMetricThresholds: ServerMetricThresholdsTable;
  webhookDeliveries: WebhookDeliveriesTable;
  webhookSeen: WebhookSeenTable;
}

export type ServiceTable = 'applications' | 'composeStacks' | 'cacheInstances' | 'databaseServices';
