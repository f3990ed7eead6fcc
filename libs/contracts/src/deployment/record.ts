import { z } from 'zod';
import { Timestamp } from '../primitives.js';

export const DeploymentStatus = z.enum(['queued', 'running', 'done', 'error', 'cancelled']);

/** One deploy of an application or a compose stack (its log is read with `deployment.readLogs`). */
export const DeploymentRecord = z.object({
  deploymentId: z.string(),
  applicationId: z.string().nullable().describe('The application deployed; null for a compose stack\'s deployment'),
  composeId: z.string().nullable().describe('The compose stack deployed; null for an application\'s deployment'),
  serverId: z.string().nullable().describe('The server it runs on; null for the platform host'),
  status: DeploymentStatus.describe(
    'queued (waiting for the server\'s agent), running, then done, error or cancelled',
  ),
  title: z.string().nullable(),
  description: z.string().nullable(),
  reason: z.string().nullable().describe('Why it ended in error or was cancelled; null otherwise'),
  createdAt: Timestamp,
  startedAt: Timestamp.nullable(),
  finishedAt: Timestamp.nullable(),
});

/** A deployment's status and log. */
export const DeploymentLog = z.object({
  deploymentId: z.string(),
  status: DeploymentStatus,
  reason: z.string().nullable(),
  log: z.string().describe('The log lines, one per line; only the newest 256 KiB are kept'),
});
