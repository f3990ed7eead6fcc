import type { Db } from '@skiff/db';
import { type Command, CommandKind, WorkloadKind, commandKindToJSON, timestampFromDate } from '@skiff/proto';
import { DomainError } from '../errors.js';
import { workloadKey } from './deploy-command.js';
import type { ProxyConfig } from './proxy-config.js';

/**
 * The lifecycle commands of a workload (stop, start, reload, remove) and what their results
 * do to its record. Statuses (`applicationStatus`, ARCHITECTURE.md "Status"):
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
  // A delete waits for the agent up to a day; then the application shows `error` and can be deleted again.
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
  workload: { kind: 'application'; id: string; appName: string };
  createdAt: Date;
}

/** The command of one operation on an application's workload, its deadline counted from `createdAt`. */
export function workloadCommand(op: WorkloadOperation, input: WorkloadCommandInput): Command {
  const { workload } = input;
  const ref = { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: workload.id, appName: workload.appName };
  const payload: Command['payload'] =
    op === 'stop'
      ? { $case: 'stopWorkload', value: { workload: ref } }
      : op === 'start'
        ? { $case: 'startWorkload', value: { workload: ref } }
        : op === 'reload'
          ? { $case: 'reloadWorkload', value: { workload: ref } }
          : { $case: 'removeWorkload', value: { workload: ref, removeVolumes: false } };
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
 * Locks the application's row for the rest of the transaction, so the commands of one
 * application are written one transaction after the other (the relay publishes them in the
 * order of their rows), and refuses new work while a delete is under way.
 */
export async function lockApplicationForWork(tx: Db, applicationId: string): Promise<void> {
  const app = await tx.selectFrom('applications').select(['id', 'appName']).where('id', '=', applicationId).forUpdate().executeTakeFirst();
  if (app && (await removalPending(tx, applicationId))) {
    throw new DomainError('BAD_REQUEST', `Application ${app.appName} is being deleted`);
  }
}

/** Whether a remove command of the application waits or runs (the delete is under way). */
export async function removalPending(db: Db, applicationId: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', workloadKey('application', applicationId))
    .where('kind', '=', REMOVE_KIND)
    .where('status', 'in', ['pending', 'published'])
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Applies the result of a lifecycle command to its application (see the table above).
 * False when the command is not a lifecycle command of an application.
 */
export async function applyWorkloadResult(
  tx: Db,
  command: { kind: string; workloadKey: string },
  succeeded: boolean,
  proxy?: Pick<ProxyConfig, 'removing'>,
): Promise<boolean> {
  const op = OPERATION_OF_KIND.get(command.kind);
  const [kind, id] = splitKey(command.workloadKey);
  if (!op || kind !== 'application' || !id) return false;
  if (!succeeded) {
    await tx.updateTable('applications').set({ applicationStatus: 'error' }).where('id', '=', id).execute();
    return true;
  }
  switch (op) {
    case 'stop':
      await tx.updateTable('applications').set({ applicationStatus: 'idle' }).where('id', '=', id).execute();
      break;
    case 'start':
      await tx.updateTable('applications').set({ applicationStatus: 'done' }).where('id', '=', id).execute();
      break;
    case 'reload':
      break;
    case 'remove': {
      // Its domains go with it (cascade), and so do their routes.
      const remove = () => tx.deleteFrom('applications').where('id', '=', id).execute();
      if (proxy) await proxy.removing(tx, { applicationId: id }, remove);
      else await remove();
      break;
    }
  }
  return true;
}

function splitKey(key: string): [string, string] {
  const at = key.indexOf(':');
  return at < 0 ? [key, ''] : [key.slice(0, at), key.slice(at + 1)];
}
