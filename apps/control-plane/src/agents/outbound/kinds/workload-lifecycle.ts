import type { Db } from '@skiff/db';
import { type Command, CommandKind, CommandStatus, WorkloadKind, commandKindToJSON, timestampFromDate } from '@skiff/proto';
import { deleteWorkloadRecord, setWorkloadStatus } from '../../../services/deployments/workloads.js';
import { laterCommandExists } from '../command-records.js';
import { type CommandResultContext, type WorkloadType, defineCommandKind, parseWorkloadKey, succeeded, workloadKey } from './kind.js';

/**
 * The lifecycle commands of a workload (an application, a compose stack or a cache instance:
 * stop, start, reload, remove) and what their results do to its record. Statuses
 * (`applicationStatus`, ARCHITECTURE.md "Status"):
 *
 * | command | while queued | succeeded                        | failed, expired or rejected |
 * |---------|--------------|----------------------------------|-----------------------------|
 * | stop    | unchanged    | `idle`                           | `error`                     |
 * | start   | unchanged    | `done`                           | `error`                     |
 * | reload  | unchanged    | unchanged                        | `error`                     |
 * | remove  | unchanged    | the record is deleted (cascade)  | `error`, the record stays   |
 *
 * A cancelled command never ran (or was stopped): the workload keeps its status. A cache
 * instance's remove is a rebuild's when a later command of the instance exists (the rebuild
 * writes its deploy in the same transaction, and a real removal refuses every later command):
 * then the record stays (cache-deploy.ts). The reason of a failure is kept on the command row
 * (`result_reason`). Results arrive in the order the agent ran the commands (one FIFO per
 * workload), after the events of any deploy queued before them.
 */
export type WorkloadOperation = 'stop' | 'start' | 'reload' | 'remove';

/** The workloads with lifecycle commands. */
export type LifecycleWorkload = Exclude<WorkloadType, 'proxy'>;

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

const WIRE_KINDS: Record<LifecycleWorkload, WorkloadKind> = {
  application: WorkloadKind.WORKLOAD_KIND_APPLICATION,
  compose: WorkloadKind.WORKLOAD_KIND_COMPOSE,
  cache: WorkloadKind.WORKLOAD_KIND_CACHE,
  // A database service is a Swarm service with a data volume, as a cache instance is.
  database: WorkloadKind.WORKLOAD_KIND_CACHE,
};

/** The operation of a command row's `kind` (the CommandKind's name). */
const OPERATION_OF_KIND = new Map<string, WorkloadOperation>(
  (Object.entries(KINDS) as [WorkloadOperation, CommandKind][]).map(([op, kind]) => [commandKindToJSON(kind), op]),
);

export interface WorkloadCommandInput {
  commandId: string;
  /** The server on the agent channel (wireServerId). */
  serverId: string;
  workload: { kind: LifecycleWorkload; id: string; appName: string };
  createdAt: Date;
  /** remove: also remove the volumes the workload owns. */
  removeVolumes?: boolean;
}

/** The command of one operation on a workload, its deadline counted from `createdAt`. */
export function workloadCommand(op: WorkloadOperation, input: WorkloadCommandInput): Command {
  const { workload } = input;
  const ref = { kind: WIRE_KINDS[workload.kind], id: workload.id, appName: workload.appName };
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

/** Applies the result of a lifecycle command to its workload (see the table above). */
async function applyLifecycleResult({ tx, command, status, proxy }: CommandResultContext): Promise<void> {
  const op = OPERATION_OF_KIND.get(command.kind);
  const target = parseWorkloadKey(command.workloadKey);
  if (!op || !target || target.type === 'proxy') return;
  if (status === CommandStatus.COMMAND_STATUS_CANCELLED) return;
  const setStatus = (applicationStatus: 'idle' | 'done' | 'error') => setStatusOf(tx, target.type as LifecycleWorkload, target.id, applicationStatus);
  if (!succeeded(status)) {
    await setStatus('error');
    return;
  }
  switch (op) {
    case 'stop':
      await setStatus('idle');
      break;
    case 'start':
      await setStatus('done');
      break;
    case 'reload':
      break;
    case 'remove':
      if (target.type === 'cache' || target.type === 'database') {
        if (!(await laterCommandExists(tx, command.workloadKey, command.position))) {
          await tx.deleteFrom(target.type === 'cache' ? 'cacheInstances' : 'databaseServices').where('id', '=', target.id).execute();
        }
      } else {
        // Its domains go with it (cascade), and so do their routes.
        await deleteWorkloadRecord(tx, { kind: target.type, id: target.id }, proxy);
      }
      break;
  }
}

async function setStatusOf(tx: Db, type: LifecycleWorkload, id: string, applicationStatus: 'idle' | 'done' | 'error'): Promise<void> {
  if (type === 'cache') await tx.updateTable('cacheInstances').set({ applicationStatus }).where('id', '=', id).execute();
  else if (type === 'database') await tx.updateTable('databaseServices').set({ applicationStatus }).where('id', '=', id).execute();
  else await setWorkloadStatus(tx, { kind: type, id }, applicationStatus);
}

/** StopWorkload, StartWorkload, ReloadWorkload and RemoveWorkload: one shape, one file. */
export const workloadLifecycle = defineCommandKind({
  name: 'workload lifecycle',
  kinds: Object.values(KINDS),
  workloads: ['application', 'compose', 'cache', 'database'],
  build: workloadCommand,
  applyResult: applyLifecycleResult,
});
