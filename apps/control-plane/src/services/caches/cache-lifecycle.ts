import { sql } from 'kysely';
import type { CacheInstance, Db } from '@skiff/db';
import { EnvError, SwarmSpecError, envList, resolveServiceVariables, swarmServiceSpec, wireServerId } from '@skiff/domain';
import type { Command } from '@skiff/proto';
import { deployWasQueued, deploysOf, newestIsPendingRemoval } from '../../agents/outbound/command-records.js';
import { CACHE_DEPLOY_DEADLINE_MS, cacheDeployCommand, cacheKey } from '../../agents/outbound/kinds/cache-deploy.js';
import { assertNoForeignNetworks } from '../shared/networks.js';
import { type WorkloadOperation, workloadCommand } from '../../agents/outbound/kinds/workload-lifecycle.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { queuedCommand } from '../../agents/outbound/command-status.js';
import { type CommandStream, NO_COMMAND_STREAM } from '../../agents/outbound/command-withdrawal.js';
import { settleNeverReceived } from '../deployments/deployment-control.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { PASSWORD_VARIABLE, cacheWorkloadSpec } from './cache-spec.js';
import type { CacheService } from './cache.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import type { QueuedRemoval } from '../shared/service-records.js';

/** Whether the instance is being removed: its newest command is a remove that has not ended. */
export const cacheRemovalUnderWay = (db: Db, cacheId: string) => newestIsPendingRemoval(db, cacheKey(cacheId));

/** Whether a deploy of the instance was ever queued: only then may it have a service. */
export const cacheWasDeployed = (db: Db, cacheId: string) => deployWasQueued(db, cacheKey(cacheId));

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

/**
 * `cache.deploy`, `rebuild`, `start`, `stop`, `reload` and `remove`, and the redeploy that
 * `saveExternalPort` asks for: each writes its commands to the outbox in a transaction that
 * holds the instance's row, so its agent runs them in the order they were accepted. The
 * agent's results move the instance on (agents/outbound/kinds: cache-deploy.ts, workload-lifecycle.ts).
 */
export class CacheLifecycle {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    private readonly caches: CacheService,
    private readonly stream: CommandStream = NO_COMMAND_STREAM,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /**
   * Rolls the instance out as it is configured now: its Swarm service from `containerImage`,
   * with the password, its variables, the data volume, the published port and the Swarm
   * settings. An instance deployed before under another appName has that service removed
   * first (its data stays). Settings the agent would refuse are BAD_REQUEST here.
   */
  async deploy(p: Principal, cacheId: string) {
    const located = await this.access.find(p, 'cache', cacheId);
    return queuedCommand(await this.write((tx) => this.queueDeploy(tx, located, false)));
  }

  /** A new service and container on the same data: the service is removed (its volume kept) and deployed again. */
  async rebuild(p: Principal, cacheId: string) {
    const located = await this.access.find(p, 'cache', cacheId);
    return queuedCommand(await this.write((tx) => this.queueDeploy(tx, located, true)));
  }

  async stop(p: Principal, cacheId: string) {
    return queuedCommand(await this.queue(p, cacheId, (cache) => this.lifecycleCommand('stop', cache)));
  }

  async start(p: Principal, cacheId: string) {
    return queuedCommand(await this.queue(p, cacheId, (cache) => this.lifecycleCommand('start', cache)));
  }

  /** Restarts the instance's task with the same spec; `appName` must be the instance's own. */
  async reload(p: Principal, input: { cacheId: string; appName: string }) {
    return queuedCommand(await this.queue(p, input.cacheId, (cache) => this.lifecycleCommand('reload', cache), input.appName));
  }

  /**
   * `cache.saveExternalPort`: saves the port, and publishes it at once (null: stops
   * publishing it) by deploying an instance that was deployed before. A port the deploy
   * would refuse is refused before anything is saved.
   */
  async saveExternalPort(p: Principal, input: { cacheId: string; externalPort: number | null }) {
    const located = await this.access.find(p, 'cache', input.cacheId);
    if (await cacheRemovalUnderWay(this.db, input.cacheId)) {
      throw new DomainError('BAD_REQUEST', `Cache instance ${located.row.appName} is being removed`);
    }
    const deployed = await cacheWasDeployed(this.db, input.cacheId);
    const port = input.externalPort;
    if (deployed && (port === null || (Number.isInteger(port) && port >= 1 && port <= 65535))) {
      this.prepare({ ...located, row: { ...located.row, externalPort: port } }, 0);
    }
    const saved = await this.caches.update(p, input);
    if (deployed) await this.write((tx) => this.queueDeploy(tx, located, false));
    return saved;
  }

  /**
   * An instance that was never deployed is removed at once. Otherwise the agent removes its
   * service and its data volume first, and the record goes when it reports them gone; until
   * then new work is refused and a repeated remove changes nothing. A failed removal leaves
   * the record with `applicationStatus: error`; remove can be called again. One none of whose
   * work ever reached its agent is removed at once, its queued work withdrawn.
   */
  async remove(p: Principal, cacheId: string) {
    const { row } = await this.access.find(p, 'cache', cacheId);
    const queued = await this.db.transaction().execute(async (tx) => {
      const locked = await tx.selectFrom('cacheInstances').selectAll().where('id', '=', cacheId).forUpdate().executeTakeFirst();
      if (!locked) return false;
      if (!(await cacheWasDeployed(tx, cacheId)) || (await settleNeverReceived(tx, this.deps, this.stream, cacheKey(cacheId)))) {
        await tx.deleteFrom('cacheInstances').where('id', '=', cacheId).execute();
        return false;
      }
      if (await cacheRemovalUnderWay(tx, cacheId)) return false;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', locked, true));
      return true;
    });
    if (queued) this.outbox.notify();
    return this.caches.record(row);
  }

  /**
   * Inside the transaction that removes these environments (a project, an environment or an
   * organization going): a remove command for each of their instances that was deployed,
   * its data volume included when `removeVolumes` (by default, as `cache.remove` does).
   * Answers what was queued.
   */
  async queueRemovals(tx: Db, environmentIds: string[], { removeVolumes = true }: { removeVolumes?: boolean } = {}): Promise<QueuedRemoval[]> {
    if (environmentIds.length === 0) return [];
    const rows = await tx.selectFrom('cacheInstances').selectAll().where('environmentId', 'in', environmentIds).execute();
    const queued: QueuedRemoval[] = [];
    for (const row of rows) {
      if (!(await cacheWasDeployed(tx, row.id))) continue;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', row, removeVolumes));
      queued.push({ kind: 'cache', id: row.id, appName: row.appName, serverId: row.serverId, removeVolumes });
    }
    return queued;
  }

  /**
   * Queues the command `build` makes of the instance (read under its row lock), for an
   * instance that was deployed and is not being removed; `appName`, when given, must be its own.
   */
  /** Answers the id of the command queued. */
  private async queue(p: Principal, cacheId: string, build: (cache: CacheInstance) => Command, appName?: string): Promise<string> {
    const { row } = await this.access.find(p, 'cache', cacheId);
    if (appName !== undefined && appName !== row.appName) {
      throw Invalid('appName', `is not the appName of cache instance ${cacheId}`);
    }
    return this.write(async (tx) => {
      const locked = await lockCacheForWork(tx, cacheId);
      if (!(await cacheWasDeployed(tx, cacheId))) {
        throw new DomainError('BAD_REQUEST', `Cache instance ${locked.appName} was never deployed: deploy it first (cache.deploy)`);
      }
      const command = build(locked);
      await this.outbox.queue(tx, command);
      return command.commandId;
    });
  }

  private async write<T>(run: (tx: Db) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(run);
    this.outbox.notify();
    return result;
  }

  /**
   * Queues the deploy of the instance's current settings (read under the row lock), after
   * the removal of its service when `recreate` or when its appName changed since the last
   * deploy; marks it `running`. Answers the deploy command's id.
   */
  private async queueDeploy(tx: Db, located: Located<'cache'>, recreate: boolean): Promise<string> {
    const row = await lockCacheForWork(tx, located.row.id);
    const deploys = await deploysOf(tx, cacheKey(row.id));
    // A counter, not a count of deploy commands: finished commands are pruned (command-records.ts).
    const { deployCount } = await tx
      .updateTable('cacheInstances')
      .set({ deployCount: sql<number>`deploy_count + 1` })
      .where('id', '=', row.id)
      .returning('deployCount')
      .executeTakeFirstOrThrow();
    const { env, spec } = this.prepare({ ...located, row }, deployCount);
    await assertNoForeignNetworks(tx, located.project.organizationId, row.serverId, row);
    const previous = deploys.newestPayload === null ? null : this.deployedAppName(deploys.newestPayload);
    if (recreate || (previous !== null && previous !== row.appName)) {
      await this.outbox.queue(tx, this.lifecycleCommand('remove', row, false));
    }
    const now = this.deps.clock();
    const commandId = this.deps.ids('cmd');
    await this.outbox.queue(
      tx,
      cacheDeployCommand({
        commandId,
        rolloutId: this.deps.ids('dep'),
        cache: row,
        spec,
        env,
        createdAt: now,
        deadline: new Date(now.getTime() + CACHE_DEPLOY_DEADLINE_MS),
      }),
    );
    await tx.updateTable('cacheInstances').set({ applicationStatus: 'running' }).where('id', '=', row.id).execute();
    return commandId;
  }

  /** The variables and the service settings of a deploy; throws BAD_REQUEST when the agent would refuse them. */
  private prepare(located: Located<'cache'>, forceUpdate: number) {
    const env = this.resolveEnv(located);
    const spec = cacheWorkloadSpec(located.row, forceUpdate);
    checkSpec(located.row, spec, env);
    return { env, spec };
  }

  /** The service name a deploy command rolled out. */
  private deployedAppName(payload: string): string | null {
    const command = this.outbox.read(payload);
    return command.payload?.$case === 'deployApplication' ? (command.payload.value.workload?.appName ?? null) : null;
  }

  private lifecycleCommand(op: WorkloadOperation, cache: CacheInstance, removeVolumes = false) {
    return workloadCommand(op, {
      commandId: this.deps.ids('cmd'),
      serverId: wireServerId(cache.serverId),
      workload: { kind: 'cache', id: cache.id, appName: cache.appName },
      createdAt: this.deps.clock(),
      removeVolumes,
    });
  }

  /** The instance's variables over its environment's and project's, references resolved, then the password. */
  private resolveEnv({ row, environment, project }: Located<'cache'>): Map<string, string> {
    const open = (sealed: string | null) => (sealed ? this.deps.secrets.open(sealed) : '');
    let variables: Map<string, string>;
    try {
      variables = resolveServiceVariables({ service: open(row.env), environment: open(environment.env), project: open(project.env) });
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
    variables.set(PASSWORD_VARIABLE, this.deps.secrets.open(row.databasePassword));
    return variables;
  }
}

/** The agent would refuse a spec the builder refuses: say so now, before anything is queued. */
function checkSpec(row: CacheInstance, spec: ReturnType<typeof cacheWorkloadSpec>, env: Map<string, string>) {
  try {
    swarmServiceSpec({ ...spec, env: envList(env) });
  } catch (err) {
    if (err instanceof SwarmSpecError) throw new DomainError('BAD_REQUEST', `Cannot deploy ${row.appName}: ${err.message}`);
    throw err;
  }
}
