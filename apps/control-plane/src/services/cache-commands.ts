import type { CacheInstance, Db } from '@skiff/db';
import { wireServerId } from '@skiff/domain';
import {
  type Command,
  CommandKind,
  CommandStatus,
  WorkloadKind,
  commandKindToJSON,
  timestampFromDate,
} from '@skiff/proto';
import { DomainError, NotFound } from '../errors.js';
import { workloadKey } from './deploy-command.js';
import { WORKLOAD_COMMAND_DEADLINE_MS, type WorkloadOperation } from './workload-commands.js';

/**
 * The commands of cache instances and what their results do to the record. A cache keeps
 * no deployment records (deployment.* serves applications): a deploy is a DeployApplication
 * command of kind CACHE whose `deployment_id` only tells its rollout apart, and the
 * instance's `applicationStatus` follows the commands:
 *
 * | command              | when queued | succeeded                           | failed, expired, rejected |
 * |----------------------|-------------|-------------------------------------|---------------------------|
 * | deploy               | `running`   | `done`                              | `error`                   |
 * | stop                 | unchanged   | `idle`                              | `error`                   |
 * | start                | unchanged   | `done`                              | `error`                   |
 * | reload               | unchanged   | unchanged                           | `error`                   |
 * | remove (with volumes)| unchanged   | the record is deleted               | `error`, the record stays |
 * | remove (rebuild)     | `running`   | unchanged (its deploy follows)      | `error`                   |
 *
 * A cancelled deploy ends in `error` too (nothing else would move it on from `running`); a
 * cancelled lifecycle command leaves the status as it was. A remove is a rebuild's when a
 * later command of the instance exists: the rebuild writes its deploy in the same
 * transaction, and a real removal refuses every later command.
 */

export const DEPLOY_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_DEPLOY_APPLICATION);
const REMOVE_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD);

const LIFECYCLE_KINDS: Record<WorkloadOperation, CommandKind> = {
  stop: CommandKind.COMMAND_KIND_STOP_WORKLOAD,
  start: CommandKind.COMMAND_KIND_START_WORKLOAD,
  reload: CommandKind.COMMAND_KIND_RELOAD_WORKLOAD,
  remove: CommandKind.COMMAND_KIND_REMOVE_WORKLOAD,
};

const OPERATION_OF_KIND = new Map<string, WorkloadOperation | 'deploy'>([
  [DEPLOY_KIND, 'deploy'],
  ...(Object.entries(LIFECYCLE_KINDS) as [WorkloadOperation, CommandKind][]).map(
    ([op, kind]) => [commandKindToJSON(kind), op] as [string, WorkloadOperation],
  ),
]);

export const cacheKey = (cacheId: string) => workloadKey('cache', cacheId);

type CacheRef = Pick<CacheInstance, 'id' | 'appName' | 'serverId'>;

const refOf = (cache: CacheRef) => ({ kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: cache.id, appName: cache.appName });

export interface CacheDeployInput {
  commandId: string;
  /** Labels this deploy's tasks (`skiff.deployment`), so the agent tells them from the previous ones. */
  rolloutId: string;
  cache: CacheRef;
  image: string;
  /** libs/domain's WorkloadSpecInput, as JSON. */
  specJson: string;
  /** The resolved variables and the password: secrets. */
  env: Map<string, string>;
  replicas: number;
  createdAt: Date;
  deadline: Date;
}

/** The DeployApplication command of one deploy of a cache instance. */
export function cacheDeployCommand(input: CacheDeployInput): Command {
  return {
    commandId: input.commandId,
    serverId: wireServerId(input.cache.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: cacheKey(input.cache.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployApplication',
      value: {
        deploymentId: input.rolloutId,
        workload: refOf(input.cache),
        image: input.image,
        env: Object.fromEntries(input.env),
        replicas: input.replicas,
        forcePull: false,
        specJson: input.specJson,
        registryAuth: undefined,
        source: undefined,
        build: undefined,
      },
    },
  };
}

/** A stop, start, reload or remove of a cache instance, its deadline counted from `createdAt`. */
export function cacheLifecycleCommand(
  op: WorkloadOperation,
  input: { commandId: string; cache: CacheRef; createdAt: Date; removeVolumes?: boolean },
): Command {
  const workload = refOf(input.cache);
  const payload: Command['payload'] =
    op === 'stop'
      ? { $case: 'stopWorkload', value: { workload } }
      : op === 'start'
        ? { $case: 'startWorkload', value: { workload } }
        : op === 'reload'
          ? { $case: 'reloadWorkload', value: { workload } }
          : { $case: 'removeWorkload', value: { workload, removeVolumes: input.removeVolumes ?? false } };
  return {
    commandId: input.commandId,
    serverId: wireServerId(input.cache.serverId),
    kind: LIFECYCLE_KINDS[op],
    workloadKey: cacheKey(input.cache.id),
    deadline: timestampFromDate(new Date(input.createdAt.getTime() + WORKLOAD_COMMAND_DEADLINE_MS[op])),
    createdAt: timestampFromDate(input.createdAt),
    payload,
  };
}

/** The instance's newest command, if any. */
function newestCommand(db: Db, cacheId: string) {
  return db
    .selectFrom('commands')
    .select(['id', 'kind', 'status'])
    .where('workloadKey', '=', cacheKey(cacheId))
    .orderBy('position', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Whether the instance is being removed: its newest command is a remove that has not ended. */
export async function cacheRemovalUnderWay(db: Db, cacheId: string): Promise<boolean> {
  const newest = await newestCommand(db, cacheId);
  return newest !== undefined && newest.kind === REMOVE_KIND && (newest.status === 'pending' || newest.status === 'published');
}

/**
 * Locks the instance's row for the rest of the transaction (its commands are written one
 * transaction after the other, so the relay publishes them in that order) and answers it;
 * refuses new work while a removal is under way.
 */
export async function lockCacheForWork(tx: Db, cacheId: string): Promise<CacheInstance> {
  const row = await tx.selectFrom('cacheInstances').selectAll().where('id', '=', cacheId).forUpdate().executeTakeFirst();
  if (!row) throw NotFound('No such cache instance');
  if (await cacheRemovalUnderWay(tx, cacheId)) throw new DomainError('BAD_REQUEST', `Cache instance ${row.appName} is being removed`);
  return row;
}

/** How many deploys of the instance were queued, and the newest one's (sealed) payload. */
export async function cacheDeploys(db: Db, cacheId: string): Promise<{ count: number; newestPayload: string | null }> {
  const deploys = db.selectFrom('commands').where('workloadKey', '=', cacheKey(cacheId)).where('kind', '=', DEPLOY_KIND);
  const { count } = await deploys.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  if (Number(count) === 0) return { count: 0, newestPayload: null };
  const newest = await deploys.select('payload').orderBy('position', 'desc').limit(1).executeTakeFirstOrThrow();
  return { count: Number(count), newestPayload: newest.payload };
}

/** Whether a deploy of the instance was ever queued: only then may it have a service. */
export async function cacheWasDeployed(db: Db, cacheId: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('workloadKey', '=', cacheKey(cacheId))
    .where('kind', '=', DEPLOY_KIND)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Applies a command's result to its cache instance (see the table above). False when the
 * command is not one of a cache instance.
 */
export async function applyCacheResult(
  tx: Db,
  command: { id: string; kind: string; workloadKey: string; position: string | number },
  status: CommandStatus,
): Promise<boolean> {
  const prefix = cacheKey('');
  const op = OPERATION_OF_KIND.get(command.kind);
  if (!op || !command.workloadKey.startsWith(prefix)) return false;
  const cacheId = command.workloadKey.slice(prefix.length);
  const setStatus = (applicationStatus: 'idle' | 'done' | 'error') =>
    tx.updateTable('cacheInstances').set({ applicationStatus }).where('id', '=', cacheId).execute();
  const succeeded = status === CommandStatus.COMMAND_STATUS_SUCCEEDED;
  if (op === 'deploy') {
    await setStatus(succeeded ? 'done' : 'error');
    return true;
  }
  if (status === CommandStatus.COMMAND_STATUS_CANCELLED) return true;
  if (!succeeded) {
    await setStatus('error');
    return true;
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
    case 'remove': {
      const later = await tx
        .selectFrom('commands')
        .select('id')
        .where('workloadKey', '=', command.workloadKey)
        .where('position', '>', String(command.position))
        .limit(1)
        .executeTakeFirst();
      if (!later) await tx.deleteFrom('cacheInstances').where('id', '=', cacheId).execute();
      break;
    }
  }
  return true;
}

/**
 * Whether a deployment event is one of a cache deploy of this server: a cache keeps no
 * deployment records, so its deploys' events are taken and set aside (the result of the
 * command moves the instance on).
 */
export async function isCacheDeployEvent(db: Db, serverId: string, commandId: string): Promise<boolean> {
  const c = await db.selectFrom('commands').select(['serverId', 'workloadKey', 'kind']).where('id', '=', commandId).executeTakeFirst();
  return c !== undefined && c.serverId === serverId && c.kind === DEPLOY_KIND && c.workloadKey.startsWith(cacheKey(''));
}
