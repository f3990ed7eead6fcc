import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** What an operation that queues work for a server's agent answers: the command to follow with `command.one`. */
export const QueuedCommand = z.object({
  commandId: z.string().describe('The command queued for the server\'s agent; follow it with `command.one`'),
  status: z.literal('queued').describe('Always `queued`: the agent runs it after the work queued before it'),
});

export const CommandStatus = z.enum(['queued', 'running', 'done', 'failed', 'cancelled']);

/** One command of a workload, as `command.one` answers it. */
export const CommandRecord = z.object({
  commandId: z.string(),
  operation: z
    .enum(['deploy', 'stop', 'start', 'reload', 'remove'])
    .describe('What the agent is asked to do to the workload'),
  applicationId: z.string().nullable().describe('The application it acts on; null otherwise'),
  composeId: z.string().nullable().describe('The compose stack it acts on; null otherwise'),
  cacheId: z.string().nullable().describe('The cache instance it acts on; null otherwise'),
  deploymentId: z.string().nullable().describe('The deployment record it carries out (application and compose deploys); null otherwise'),
  serverId: z.string().nullable().describe('The server whose agent runs it; null for the platform host'),
  status: CommandStatus.describe(
    '`queued` until it ends (`sentAt` says whether it has reached the server\'s agent; a deploy shows `running` ' +
      'while its deployment runs), then `done`, `failed` (see `reason`) or `cancelled` (removed from the queue or ' +
      'cancelled by a user)',
  ),
  reason: z.string().nullable().describe('Why it failed or was cancelled; null otherwise'),
  createdAt: Timestamp,
  sentAt: Timestamp.nullable().describe('When it was handed to the agent channel; null while it waits in the control plane'),
  finishedAt: Timestamp.nullable(),
  deadline: Timestamp.describe('When it ends `failed` if the agent has not finished it by then'),
});
