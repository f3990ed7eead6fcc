import type { CommandRow, Db } from '@skiff/db';
import { CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON } from '@skiff/domain';
import { CommandKind, commandKindToJSON } from '@skiff/proto';

/** What an operation that queued a command answers (`QueuedCommand` of the contracts). */
export interface QueuedCommand {
  commandId: string;
  status: 'queued';
}

export const queuedCommand = (commandId: string): QueuedCommand => ({ commandId, status: 'queued' });

export type FollowedStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';
export type CommandOperation = 'deploy' | 'stop' | 'start' | 'reload' | 'remove';

const OPERATIONS = new Map<string, CommandOperation>([
  [commandKindToJSON(CommandKind.COMMAND_KIND_DEPLOY_APPLICATION), 'deploy'],
  [commandKindToJSON(CommandKind.COMMAND_KIND_DEPLOY_COMPOSE), 'deploy'],
  [commandKindToJSON(CommandKind.COMMAND_KIND_STOP_WORKLOAD), 'stop'],
  [commandKindToJSON(CommandKind.COMMAND_KIND_START_WORKLOAD), 'start'],
  [commandKindToJSON(CommandKind.COMMAND_KIND_RELOAD_WORKLOAD), 'reload'],
  [commandKindToJSON(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD), 'remove'],
]);

/** The workload operation a row's kind carries out; undefined for commands of no workload (proxy configurations). */
export const operationOf = (kind: string): CommandOperation | undefined => OPERATIONS.get(kind);

/**
 * The reasons cancelled work ends with. The outbox keeps a cancelled command as `failed` with
 * its reason (the agent's CANCELLED result, or the control plane ending one the agent never
 * received: command-records.ts), so the reason is what tells the two apart.
 */
const CANCELLED_REASONS = new Set([CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON, 'cancelled']);

/**
 * The status a caller follows: `queued` until the command ends (sent to the agent or not),
 * `running` while the deployment it carries out runs, then `done`, `failed` or `cancelled`.
 */
export function followedStatus(row: Pick<CommandRow, 'status' | 'resultReason'>, deploymentStatus?: string): FollowedStatus {
  if (row.status === 'done') return 'done';
  if (row.status === 'failed') return row.resultReason !== null && CANCELLED_REASONS.has(row.resultReason) ? 'cancelled' : 'failed';
  return deploymentStatus === 'running' ? 'running' : 'queued';
}

/** A command's row (without its payload) and the status of the deployment it carries out, if any. */
export async function commandForFollowing(db: Db, commandId: string) {
  const row = await db
    .selectFrom('commands')
    .leftJoin('deployments', 'deployments.id', 'commands.deploymentId')
    .select([
      'commands.id',
      'commands.serverId',
      'commands.kind',
      'commands.workloadKey',
      'commands.deploymentId',
      'commands.status',
      'commands.resultReason',
      'commands.createdAt',
      'commands.publishedAt',
      'commands.finishedAt',
      'commands.deadline',
      'deployments.status as deploymentStatus',
    ])
    .where('commands.id', '=', commandId)
    .executeTakeFirst();
  return row;
}
