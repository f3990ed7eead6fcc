import type { Db } from '@skiff/db';
import { type Command, CommandKind, commandKindToJSON, timestampFromDate } from '@skiff/proto';
import { DomainError } from '../errors.js';
import { workloadKey } from './deploy-command.js';
import type { ProxyConfig, RouteOwner } from './proxy-config.js';
import { DEPLOYED_KINDS, type DeployedKind, type WorkloadOwner, ownerOfKey, setWorkloadStatus, workloadRow, workloadTitle } from './workloads.js';

/**
 * The lifecycle commands of a workload (an application or a compose stack: stop, start,
 * reload, remove) and what their results do to its record. Statuses (`applicationStatus`,
 * ARCHITECTURE.md "Status"):
 *
 * | command | while queued | succeeded                        | failed, expired or rejected |
 * |---------|--------------|----------------------------------|-----------------------------|
 * | stop    | unchanged    | `idle`                           | `error`                     |
 * | start   | unchanged    | `done`                           | `error`                     |
 * | reload  | unchanged    | unchanged                        | `error`                     |
 * | remove  | unchanged    | the record is deleted (cascade)  | `error`, the record stays   |
 *
 * The reason of a failure is kept on the command row (`result_reason`). Results arrive in
 * the order the agent ran the commands (one FIFO per workload), after the events of any
 * deploy queued before them.
 */
export type WorkloadOperation = 'stop' | 'start' | 'reload' | 'remove';

/** How long a command may wait (behind the workload's earlier commands, or for an offline agent) and run. */
export const WORKLOAD_COMMAND_DEADLINE_MS: Record<WorkloadOperation, number> = {
  stop: 30 * 60_000,
  start: 30 * 60_000,
  reload: 30 * 60_000,
  // A delete waits for the agent up to a day; then the workload shows `error` and can be deleted again.
  remove: 24 * 3600_000,
};

const KINDS: Record<WorkloadOperation, CommandKind> = {
  stop: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
  start: CommandKind.COMMAND_KIND_START_WORKLOAD,
  reload: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
  remove: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
};

/** The operation of a command row's `kind` (the CommandKind's name), if it is one of these. */
const OPERATION_OF_KIND = new Map<string, WorkloadOperation>(
  (Object.entries(KINDS) as [WorkloadOperation, CommandKind][]).map(([op, kind]) => [commandKindToJSON(kind), op]),
);

export const REMOVE_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD);

export interface WorkloadCommandInput {
  commandId: string;
  /** The server on the agent channel (wireServerId). */
  serverId: string;
  workload: { kind: DeployedKind; id: string; appName: string };
  createdAt: Date;
  /** remove: also remove the volumes the workload owns. */
  removeVolumes?: boolean;
}

/** The command of one operation on a workload, its deadline counted from `createdAt`. */
export function workloadCommand(op: WorkloadOperation, input: WorkloadCommandInput): Command {
  const { workload } = input;
  const ref = { kind: DEPLOYED_KINDS[workload.kind].wire, id: workload.id, appName: workload.appName };
  const payload: Command['payload'] =
    op === 'stop'
      ? { $case: 'stopWorkload', value: { workload: ref } }
      : op === 'start'
        ? { $case: 'startWorkload', value: { workload: ref } }
        : op === 'reload'
          ? { $case: 'reloadWorkload', value: { workload: ref } }
          : { $case: 'removeWorkload', value: { workload: ref, removeVolumes: input.removeVolumes ?? false } };
  return {
    commandId: input.commandId,
    serverId: input.serverId,
    kind: KINDS[op],
    workloadKey: workloadKey(workload.kind, workload.id),
    deadline: timestampFromDate(new Date(input.createdAt.getTime() + WORKLOAD_COMMAND_DEADLINE_MS[op])),
    createdAt: timestampFromDate(input.createdAt),
    payload,
  };
}

/**
 * Locks the workload's row for the rest of the transaction, so the commands of one workload
 * are written one transaction after the other (the relay publishes them in the order of their
 * rows), and refuses new work while a delete is under way.
 */
export async function lockWorkloadForWork(tx: Db, owner: WorkloadOwner): Promise<void> {
  const row = await workloadRow(tx, owner, true);
  if (row && (await removalPending(tx, owner))) {
    throw new DomainError('BAD_REQUEST', `${workloadTitle(owner.kind, row.appName)} is being deleted`);
  }
}

/** Whether a remove command of the workload waits or runs (the delete is under way). */
export async function removalPending(db: Db, owner: WorkloadOwner): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey(owner.kind, owner.id))
    .where('kind', '=', REMOVE_KIND)
    .where('status', 'in', ['pending', 'published'])
    .executeTakeFirst();
  return row !== undefined;
}

/** The record whose removal takes the workload's domains (and their routes) with it. */
export const routeOwner = (owner: WorkloadOwner): RouteOwner =>
  owner.kind === 'application' ? { applicationId: owner.id } : { composeId: owner.id };

/** Deletes the workload's record (its domains and deployments go by cascade), queueing the proxy configs that routed to it. */
export async function deleteWorkloadRecord(tx: Db, owner: WorkloadOwner, proxy?: Pick<ProxyConfig, 'removing'>): Promise<number> {
  const remove = () => tx.deleteFrom(DEPLOYED_KINDS[owner.kind].table as 'applications').where('id', '=', owner.id).execute();
  if (proxy) return proxy.removing(tx, routeOwner(owner), remove);
  await remove();
  return 0;
}

/**
 * Applies the result of a lifecycle command to its workload (see the table above).
 * False when the command is not a lifecycle command of an application or a compose stack.
 */
export async function applyWorkloadResult(
  tx: Db,
  command: { kind: string; workloadKey: string },
  succeeded: boolean,
  proxy?: Pick<ProxyConfig, 'removing'>,
): Promise<boolean> {
  const op = OPERATION_OF_KIND.get(command.kind);
  const owner = ownerOfKey(command.workloadKey);
  if (!op || !owner) return false;
  if (!succeeded) {
    await setWorkloadStatus(tx, owner, 'error');
    return true;
  }
  switch (op) {
    case 'stop':
      await setWorkloadStatus(tx, owner, 'idle');
      break;
    case 'start':
      await setWorkloadStatus(tx, owner, 'done');
      break;
    case 'reload':
      break;
    case 'remove':
      // Its domains go with it (cascade), and so do their routes.
      await deleteWorkloadRecord(tx, owner, proxy);
      break;
  }
  return true;
}
