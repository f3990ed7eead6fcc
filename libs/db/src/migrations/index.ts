import type { Migration } from 'kysely';
import * as identityProjects from './2026-11-22T00-00-identity-projects.js';
import * as platformRecords from './2026-11-23T00-00-platform-records.js';
import * as deployments from './2026-11-24T00-00-deployments.js';
import * as dropArchives from './2026-11-25T00-00-drop-archives.js';
import * as serverAgents from './2026-11-25T00-01-server-agents.js';
import * as proxyRevisions from './2026-11-26T00-00-proxy-revisions.js';
import * as composeDeployments from './2026-11-27T00-00-compose-deployments.js';
import * as invitationBinding from './2026-11-28T00-00-invitation-binding.js';
import * as deployCounters from './2026-11-29T00-00-deploy-counters.js';
import * as platformHostTrust from './2026-11-29T00-01-platform-host-trust.js';
import * as apiKeyScopes from './2026-11-30T04-00-api-key-scopes.js';
import * as auditEvents from './2026-11-30T04-01-audit-events.js';
import * as certificateIdsPerOrganization from './2026-11-30T05-04-certificate-ids-per-organization.js';
import * as commandStreamSeqs from './2026-12-01T07-00-command-stream-seqs.js';
import * as removedServers from './2026-12-01T07-01-removed-servers.js';
import * as removedServerWorkloads from './2026-12-02T00-00-removed-server-workloads.js';
import * as billingCustomers from './2026-12-02T08-00-billing-customers.js';
import * as backupRuns from './2026-12-05T17-01-backup-runs.js';
import * as events from './2026-12-03T01-01-events.js';
import * as deploymentImages from './2026-12-04T14-06-deployment-images.js';
import * as cleanupSchedules from './2026-12-04T13-05-cleanup-schedules.js';
import * as metrics from './2026-12-04T15-00-metrics.js';
import * as applicationMounts from './2026-12-05T18-00-application-mounts.js';
import * as webhookDeliveries from './2026-12-07T16-00-webhook-deliveries.js';
import * as previewRuns from './2026-12-07T20-00-preview-runs.js';
import * as databaseServices from './2026-12-05T16-01-database-services.js';
import * as composeConfigFiles from './2026-12-07T12-00-compose-config-files.js';
import * as eventRetention from './2026-12-07T12-00-event-retention.js';
import * as databaseRestores from './2026-12-07T14-00-database-restores.js';
import * as composeRestores from './2026-12-09T04-00-compose-restores.js';
import * as composeDeployedPorts from './2026-12-12T02-00-compose-deployed-ports.js';
import * as accessNotify from './2026-12-12T03-00-access-notify.js';
import * as backupRunRecords from './2026-12-12T09-00-backup-runs.js';
import * as backupVolumesAlertsEncryption from './2026-12-07T21-00-backup-volumes-alerts-encryption.js';
import * as backupVerifications from './2026-12-07T26-00-backup-verifications.js';
import * as deploymentCommits from './2026-12-08T04-00-deployment-commits.js';
import * as previewForgeState from './2026-12-08T07-00-preview-forge-state.js';

/** Every migration, by its ISO-dated name; names sort in the order they run. */
export const migrations: Record<string, Migration> = {
  '2026-11-22T00-00-identity-projects': identityProjects,
  '2026-11-23T00-00-platform-records': platformRecords,
  '2026-11-24T00-00-deployments': deployments,
  '2026-11-25T00-00-drop-archives': dropArchives,
  '2026-11-25T00-01-server-agents': serverAgents,
  '2026-11-26T00-00-proxy-revisions': proxyRevisions,
  '2026-11-27T00-00-compose-deployments': composeDeployments,
  '2026-11-28T00-00-invitation-binding': invitationBinding,
  '2026-11-29T00-00-deploy-counters': deployCounters,
  '2026-11-29T00-01-platform-host-trust': platformHostTrust,
  '2026-11-30T04-00-api-key-scopes': apiKeyScopes,
  '2026-11-30T04-01-audit-events': auditEvents,
  '2026-11-30T05-04-certificate-ids-per-organization': certificateIdsPerOrganization,
  '2026-12-01T07-00-command-stream-seqs': commandStreamSeqs,
  '2026-12-01T07-01-removed-servers': removedServers,
  '2026-12-02T00-00-removed-server-workloads': removedServerWorkloads,
  '2026-12-02T08-00-billing-customers': billingCustomers,
  '2026-12-03T01-01-events': events,
  '2026-12-04T14-06-deployment-images': deploymentImages,
  '2026-12-04T13-05-cleanup-schedules': cleanupSchedules,
  '2026-12-04T15-00-metrics': metrics,
  '2026-12-05T17-01-backup-runs': backupRuns,
  '2026-12-05T18-00-application-mounts': applicationMounts,
  '2026-12-05T16-01-database-services': databaseServices,
  '2026-12-07T12-00-compose-config-files': composeConfigFiles,
  '2026-12-07T12-00-event-retention': eventRetention,
  '2026-12-07T14-00-database-restores': databaseRestores,
  '2026-12-07T16-00-webhook-deliveries': webhookDeliveries,
  '2026-12-07T20-00-preview-runs': previewRuns,
  '2026-12-07T21-00-backup-volumes-alerts-encryption': backupVolumesAlertsEncryption,
  '2026-12-07T26-00-backup-verifications': backupVerifications,
  '2026-12-08T04-00-deployment-commits': deploymentCommits,
  '2026-12-08T07-00-preview-forge-state': previewForgeState,
  '2026-12-09T04-00-compose-restores': composeRestores,
  '2026-12-12T02-00-compose-deployed-ports': composeDeployedPorts,
  '2026-12-12T03-00-access-notify': accessNotify,
  '2026-12-12T09-00-backup-runs': backupRunRecords,
};
