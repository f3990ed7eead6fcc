import type { Db } from '@skiff/db';
import { CACHE_DEPLOY_DEADLINE_MS, cacheDeployCommand } from '../../agents/outbound/kinds/cache-deploy.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { type CommandStream, NO_COMMAND_STREAM } from '../../agents/outbound/command-withdrawal.js';
import type { Principal } from '../../authz/principal.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { QueuedRemoval } from '../shared/service-records.js';
import { type LifecycleKind, StatefulLifecycle } from '../stateful/stateful-lifecycle.js';
import { PASSWORD_VARIABLE, cacheWorkloadSpec } from './cache-spec.js';
import type { CacheService } from './cache.js';

/**
 * `cache.deploy`, `rebuild`, `start`, `stop`, `reload` and `remove`, and the redeploy that
 * `saveExternalPort` asks for, run by the stateful lifecycle (stateful-lifecycle.ts); the
 * cache's own part is its deploy: the password appended to its variables, and its spec.
 */
export class CacheLifecycle {
  private readonly runner: StatefulLifecycle<'cache'>;

  constructor(
    deps: ServiceDeps,
    private readonly access: ServiceAccess,
    outbox: CommandOutbox,
    private readonly caches: CacheService,
    stream: CommandStream = NO_COMMAND_STREAM,
  ) {
    const kind: LifecycleKind<'cache'> = {
      kind: 'cache',
      noun: 'cache instance',
      deployHint: ' (cache.deploy)',
      deadlineMs: CACHE_DEPLOY_DEADLINE_MS,
      deployCommand: ({ row, ...rest }) => cacheDeployCommand({ ...rest, cache: row }),
      deployment: ({ row }, variables, forceUpdate) => {
        variables.set(PASSWORD_VARIABLE, deps.secrets.open(row.databasePassword));
        return { env: variables, spec: cacheWorkloadSpec(row, forceUpdate) };
      },
    };
    this.runner = new StatefulLifecycle(deps, outbox, stream, kind);
  }

  /**
   * Rolls the instance out as it is configured now: its Swarm service from `containerImage`,
   * with the password, its variables, the data volume, the published port and the Swarm
   * settings. An instance deployed before under another appName has that service removed
   * first (its data stays). Settings the agent would refuse are BAD_REQUEST here.
   */
  async deploy(p: Principal, cacheId: string) {
    return this.runner.deploy(await this.access.find(p, 'cache', cacheId), false);
  }

  /** A new service and container on the same data: the service is removed (its volume kept) and deployed again. */
  async rebuild(p: Principal, cacheId: string) {
    return this.runner.deploy(await this.access.find(p, 'cache', cacheId), true);
  }

  async stop(p: Principal, cacheId: string) {
    return this.runner.run('stop', await this.access.find(p, 'cache', cacheId));
  }

  async start(p: Principal, cacheId: string) {
    return this.runner.run('start', await this.access.find(p, 'cache', cacheId));
  }

  /** Restarts the instance's task with the same spec; `appName` must be the instance's own. */
  async reload(p: Principal, input: { cacheId: string; appName: string }) {
    return this.runner.run('reload', await this.access.find(p, 'cache', input.cacheId), input.appName);
  }

  /**
   * `cache.saveExternalPort`: saves the port, and publishes it at once (null: stops
   * publishing it) by deploying an instance that was deployed before. A port the deploy
   * would refuse is refused before anything is saved.
   */
  async saveExternalPort(p: Principal, input: { cacheId: string; externalPort: number | null }) {
    const located = await this.access.find(p, 'cache', input.cacheId);
    return this.runner.saveExternalPort(located, input.externalPort, () => this.caches.update(p, input));
  }

  /** Removes the instance, its data volume included (StatefulLifecycle.remove). */
  async remove(p: Principal, cacheId: string) {
    const located = await this.access.find(p, 'cache', cacheId);
    await this.runner.remove(located, true);
    return this.caches.record(located.row);
  }

  /** In the transaction removing these environments: a remove for each deployed instance (volumes by default, as `cache.remove`). */
  queueRemovals(tx: Db, environmentIds: string[], { removeVolumes = true }: { removeVolumes?: boolean } = {}): Promise<QueuedRemoval[]> {
    return this.runner.queueRemovals(tx, environmentIds, removeVolumes);
  }
}
