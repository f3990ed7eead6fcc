import type { CacheInstance } from '@skiff/db';
import { type WorkloadSpecInput, wireServerId } from '@skiff/domain';
import { type Command, CommandKind, WorkloadKind, timestampFromDate } from '@skiff/proto';
import { DEPLOY_DEADLINE_MS, deployPayload } from './deploy-application.js';
import { type CommandResultContext, defineCommandKind, succeeded, workloadKey } from './kind.js';

/**
 * The deploys of cache instances and what their results do to the record. A cache keeps
 * no deployment records (deployment.* serves applications): a deploy is a DeployApplication
 * command of kind CACHE whose `deployment_id` only tells its rollout apart, and the
 * instance's `applicationStatus` follows the commands (its stop, start, reload and remove:
 * workload-lifecycle.ts):
 *
 * | command              | when queued | succeeded                           | failed, expired, rejected |
 * |----------------------|-------------|-------------------------------------|---------------------------|
 * | deploy               | `running`   | `done`                              | `error`                   |
 * | remove (rebuild)     | `running`   | unchanged (its deploy follows)      | `error`                   |
 *
 * A cancelled deploy ends in `error` too (nothing else would move it on from `running`).
 */

/** How long an agent has to roll a cache instance out. */
export const CACHE_DEPLOY_DEADLINE_MS = DEPLOY_DEADLINE_MS;

export const cacheKey = (cacheId: string) => workloadKey('cache', cacheId);

type CacheRef = Pick<CacheInstance, 'id' | 'appName' | 'serverId'>;

export interface CacheDeployInput {
  commandId: string;
  /** Labels this deploy's tasks (`skiff.deployment`), so the agent tells them from the previous ones. */
  rolloutId: string;
  cache: CacheRef;
  /** The service's settings (its `env` is not sent: the variables travel in `env` below). */
  spec: WorkloadSpecInput;
  /** The resolved variables and the password: secrets. */
  env: Map<string, string>;
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
      value: deployPayload(input.rolloutId, { kind: WorkloadKind.WORKLOAD_KIND_CACHE, id: input.cache.id, appName: input.cache.appName }, input.spec, input.env),
    },
  };
}

/** The instance is `done` after a deploy that succeeded, `error` after any other end. */
async function applyCacheDeployResult({ tx, command, status }: CommandResultContext): Promise<void> {
  const cacheId = command.workloadKey.slice(cacheKey('').length);
  const applicationStatus = succeeded(status) ? 'done' : 'error';
  await tx.updateTable('cacheInstances').set({ applicationStatus }).where('id', '=', cacheId).execute();
}

/**
 * DeployApplication of a cache instance. Its deployment events name no record: they are taken
 * and set aside (the result of the command moves the instance on).
 */
export const cacheDeploy = defineCommandKind({
  name: 'cache deploy',
  kinds: [CommandKind.COMMAND_KIND_DEPLOY_APPLICATION],
  workloads: ['cache'],
  deploys: true,
  unrecordedEvents: 'set aside',
  build: cacheDeployCommand,
  applyResult: applyCacheDeployResult,
});
