import type { EventRecord } from '@skiff/db';
import type { EventKind, EventMessage } from '../notifications/channels/channel-sender.js';
import { trimChar } from '@skiff/domain';

const WORKLOAD_LABEL: Record<string, string> = { application: 'Application', compose: 'Compose stack' };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** The title's verb per kind and outcome. */
function headline(kind: EventKind, outcome: string): string {
  switch (kind) {
    case 'appDeploy':
      return 'Deployed';
    case 'appBuildError':
      return 'Deploy failed';
    case 'platformRestart':
      return 'Skiff restarted';
    case 'serverThreshold':
      return outcome === 'success' ? 'Server back under its threshold' : 'Server threshold crossed';
    case 'databaseBackup':
    case 'volumeBackup':
    case 'platformBackup':
      return outcome === 'failure' ? 'Backup failed' : 'Backup done';
    case 'containerCleanup':
      return outcome === 'failure' ? 'Cleanup failed' : 'Cleanup done';
  }
}

/**
 * The message a person reads about one event: a title naming what happened and to which
 * workload, a line or two of outcome and reason, and the ids to look further (a link when
 * the platform's public address is known).
 */
export function renderEvent(event: EventRecord, options: { organizationName?: string; baseUrl?: string } = {}): EventMessage {
  const kind = event.kind as EventKind;
  const s = event.summary;
  const subject = event.workloadName ?? str(s.subject);
  const title = subject ? `${headline(kind, event.outcome)}: ${subject}` : headline(kind, event.outcome);
  const lines: string[] = [];
  const fields: Array<[string, string]> = [];
  const field = (label: string, value: unknown) => {
    const v = str(value);
    if (v !== undefined) fields.push([label, v]);
  };
  if (kind === 'appDeploy' || kind === 'appBuildError') {
    const what = WORKLOAD_LABEL[event.workloadKind ?? ''] ?? 'Workload';
    lines.push(kind === 'appDeploy' ? `${what} ${subject} was deployed.` : `${what} ${subject} failed to deploy.`);
    if (str(s.reason)) lines.push(`Reason: ${str(s.reason)}`);
  } else if (kind === 'serverThreshold') {
    const where = s.state === 'recovered' ? 'back under' : 'above';
    lines.push(str(s.message) ?? `${str(s.type)} usage ${str(s.value)}% is ${where} the ${str(s.threshold)}% threshold`);
  } else if (kind === 'platformRestart') {
    lines.push('The control plane started again after a restart.');
  } else if (str(s.message)) {
    lines.push(str(s.message)!);
  }
  field('Organization', options.organizationName);
  field('Project', s.project);
  field('Environment', s.environment);
  if (event.workloadKind) field(WORKLOAD_LABEL[event.workloadKind] ?? 'Workload', event.workloadName);
  field('Server', s.serverType === undefined ? event.serverId : s.serverType);
  if (kind === 'serverThreshold') {
    field('Resource', s.type);
    field('Value', s.value);
    field('Threshold', s.threshold);
  }
  field('Deployment', s.deploymentId);
  field('Event', event.id);
  const message: EventMessage = {
    kind,
    title,
    text: lines.join('\n'),
    outcome: event.outcome,
    fields,
    occurredAt: event.occurredAt,
  };
  if (options.baseUrl && str(s.deploymentId)) {
    message.link = `${trimChar(options.baseUrl, '/', 'end')}/api/deployment.readLogs?deploymentId=${encodeURIComponent(str(s.deploymentId)!)}`;
  }
  return message;
}
