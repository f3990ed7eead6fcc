import type { IdPool } from './ids.js';

/**
 * Records made before the run, so that valid inputs name records that exist: a server, a project
 * with two environments, an application with a domain and basic auth, a compose stack, a cache,
 * a backup destination and backup, an AI configuration, an SSH key, an invitation. Each step
 * names the ids it uses; a step whose ids are missing (an earlier one failed) is skipped.
 */
export const SETUP_STEPS: readonly { operation: string; input: (id: (field: string) => string | undefined) => Record<string, unknown> | null }[] = [
  { operation: 'user.get', input: () => ({}) },
  // The keys there are already (the run's own among them) become anchors: never removed.
  { operation: 'user.apiKeys', input: () => ({}) },
  { operation: 'server.create', input: () => ({ name: 'fuzz', address: '198.51.100.9' }) },
  { operation: 'project.create', input: () => ({ name: 'fuzz' }) },
  { operation: 'environment.create', input: (id) => need({ projectId: id('projectId'), name: 'fuzz-two' }) },
  { operation: 'application.create', input: (id) => need({ name: 'fuzz-app', environmentId: id('environmentId') }) },
  { operation: 'compose.create', input: (id) => need({ name: 'fuzz-compose', environmentId: id('environmentId') }) },
  { operation: 'cache.create', input: (id) => need({ name: 'fuzz-cache', environmentId: id('environmentId'), databasePassword: 'fuzz-password' }) },
  { operation: 'dbA.create', input: (id) => need({ name: 'fuzz-pg', environmentId: id('environmentId') }) },
  { operation: 'domain.create', input: (id) => need({ host: 'fuzz-anchor.example.test', applicationId: id('applicationId'), port: 80 }) },
  { operation: 'security.create', input: (id) => need({ applicationId: id('applicationId'), username: 'fuzz', password: 'fuzz-password' }) },
  {
    operation: 'destination.create',
    input: () => ({ name: 'fuzz', endpoint: 'http://127.0.0.1:9', region: 'eu', bucket: 'fuzz-bucket', accessKey: 'fuzz', secretKey: 'fuzz-secret' }),
  },
  {
    operation: 'backup.create',
    input: (id) => need({ schedule: '@daily', prefix: 'fuzz', destinationId: id('destinationId'), database: 'fuzz', databaseType: 'dbA', dbAId: id('dbAId') }),
  },
  { operation: 'ai.create', input: () => ({ name: 'fuzz', apiUrl: 'http://127.0.0.1:9/v1', apiKey: 'fuzz-key', model: 'fuzz', isEnabled: true }) },
  { operation: 'sshKey.generate', input: () => ({ name: 'fuzz' }) },
  { operation: 'organization.inviteMember', input: () => ({ email: 'fuzz-invitee@example.com', role: 'member' }) },
];

/** The input, or null when one of its values is missing. */
function need(input: Record<string, unknown>): Record<string, unknown> | null {
  return Object.values(input).some((v) => v === undefined) ? null : input;
}

/** What the run removes at its end (best effort): the records it made, anchors included, by id field. */
export const CLEANUP: readonly { field: string; operation: string }[] = [
  { field: 'projectId', operation: 'project.remove' },
  { field: 'backupId', operation: 'backup.remove' },
  { field: 'destinationId', operation: 'destination.remove' },
  { field: 'aiId', operation: 'ai.delete' },
  { field: 'sshKeyId', operation: 'sshKey.remove' },
  { field: 'certificateId', operation: 'certificates.remove' },
  { field: 'notificationId', operation: 'notification.remove' },
  { field: 'serverId', operation: 'server.remove' },
];

export function firstId(ids: IdPool) {
  return (field: string) => ids.candidates(field, false)[0];
}
