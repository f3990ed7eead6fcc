import { sql } from 'kysely';
import type { Db } from '@skiff/db';
import { EnvError, SwarmSpecError, type WorkloadSpecInput, envList, resolveServiceVariables, swarmServiceSpec, wireServerId } from '@skiff/domain';
import type { Command } from '@skiff/proto';
import { deployWasQueued, deploysOf, newestIsPendingRemoval } from '../../agents/outbound/command-records.js';
import { queuedCommand } from '../../agents/outbound/command-status.js';
import type { CommandStream } from '../../agents/outbound/command-withdrawal.js';
import { workloadKey } from '../../agents/outbound/kinds/kind.js';
import { type WorkloadOperation, workloadCommand } from '../../agents/outbound/kinds/workload-lifecycle.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { settleNeverReceived } from '../deployments/deployment-control.js';
import type { ServiceDeps } from '../shared/deps.js';
import { assertNoForeignNetworks } from '../shared/networks.js';
import type { Located } from '../shared/service-access.js';
import { type QueuedRemoval, serviceTables } from '../shared/service-records.js';
import { type RowOf, type StatefulKind, type StatefulRow, rowOf, withRow } from './stateful-spec.js';

/** What tells one stateful kind's lifecycle from the other's. */
export interface LifecycleKind<K extends StatefulKind> {
  kind: K;
  /** How messages name one: `cache instance`. */
  noun: string;
  /** Said after "deploy it first" to a service never deployed. */
  deployHint: string;
  deadlineMs: number;
  deployCommand(input: { commandId: string; rolloutId: string; row: RowOf<K>; spec: WorkloadSpecInput; env: Map<string, string>; createdAt: Date; deadline: Date }): Command;
  /** The deploy's variables (given the service's own, resolved) and its Swarm settings. */
  deployment(located: Located<K>, variables: Map<string, string>, forceUpdate: number): { env: Map<string, string>; spec: WorkloadSpecInput };
}

/**
 * deploy, rebuild, start, stop, reload and remove of a stateful service, and the redeploy of
 * saveExternalPort, on a service already found with the caller's access rules. Each writes its
 * commands to the outbox in a transaction that holds the service's row, so its agent runs them
 * in the order they were accepted; the agent's results move the service on
 * (agents/outbound/kinds: cache-deploy.ts, database-deploy.ts, workload-lifecycle.ts).
 */
export class StatefulLifecycle<K extends StatefulKind> {
  private readonly table: 'cacheInstances';
  private readonly Noun: string;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly outbox: CommandOutbox,
    private readonly stream: CommandStream,
    private readonly kind: LifecycleKind<K>,
  ) {
    // One query shape serves both tables: their shared columns have the same names and types.
    this.table = serviceTables[kind.kind].table as 'cacheInstances';
    this.Noun = kind.noun[0]!.toUpperCase() + kind.noun.slice(1);
  }

  private get db() {
    return this.deps.db;
  }

  private key(id: string) {
    return workloadKey(this.kind.kind, id);
  }

  /** Whether the service is being removed: its newest command is a remove that has not ended. */
  private removalUnderWay(db: Db, id: string) {
    return newestIsPendingRemoval(db, this.key(id));
  }

  /** Whether a deploy of the service was ever queued: only then may it have a Swarm service. */
  private wasDeployed(db: Db, id: string) {
    return deployWasQueued(db, this.key(id));
  }

  /** Rolls the service out as configured now; `recreate`: its Swarm service removed first (its data kept). */
  async deploy(located: Located<K>, recreate: boolean) {
    return queuedCommand(await this.write((tx) => this.queueDeploy(tx, located, recreate)));
  }

  /** stop, start or reload of a deployed service; `appName`, when given, must be its own. */
  async run(op: 'stop' | 'start' | 'reload', located: Located<K>, appName?: string) {
    const row = rowOf(located);
    if (appName !== undefined && appName !== row.appName) throw Invalid('appName', `is not the appName of ${this.kind.noun} ${row.id}`);
    const commandId = await this.write(async (tx) => {
      const locked = await this.lockForWork(tx, row.id);
      if (!(await this.wasDeployed(tx, row.id))) {
        throw new DomainError('BAD_REQUEST', `${this.Noun} ${locked.appName} was never deployed: deploy it first${this.kind.deployHint}`);
      }
      const command = this.lifecycleCommand(op, locked);
      await this.outbox.queue(tx, command);
      return command.commandId;
    });
    return queuedCommand(commandId);
  }

  /**
   * Saves the port with `save` and applies it at once (null: stops publishing it) by deploying
   * a service that was deployed before. A port the deploy would refuse is refused first.
   */
  async saveExternalPort<R>(located: Located<K>, port: number | null, save: () => Promise<R>): Promise<R> {
    const row = rowOf(located);
    if (await this.removalUnderWay(this.db, row.id)) throw new DomainError('BAD_REQUEST', `${this.Noun} ${row.appName} is being removed`);
    const deployed = await this.wasDeployed(this.db, row.id);
    if (deployed && (port === null || (Number.isInteger(port) && port >= 1 && port <= 65535))) {
      this.prepare(withRow(located, { ...row, externalPort: port }), 0);
    }
    const saved = await save();
    if (deployed) await this.write((tx) => this.queueDeploy(tx, located, false));
    return saved;
  }

  /**
   * One never deployed (or none of whose work reached its agent, that work withdrawn) goes at
   * once. Otherwise the agent removes its service, and its data volume when `removeVolumes`;
   * the record goes when it reports them gone. Until then new work is refused and a repeated
   * remove changes nothing; a failed removal leaves `applicationStatus: error`.
   */
  async remove(located: Located<K>, removeVolumes: boolean): Promise<void> {
    const { id } = rowOf(located);
    const queued = await this.db.transaction().execute(async (tx) => {
      const locked = await tx.selectFrom(this.table).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      if (!locked) return false;
      if (!(await this.wasDeployed(tx, id)) || (await settleNeverReceived(tx, this.deps, this.stream, this.key(id)))) {
        await tx.deleteFrom(this.table).where('id', '=', id).execute();
        return false;
      }
      if (await this.removalUnderWay(tx, id)) return false;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', locked, removeVolumes));
      return true;
    });
    if (queued) this.outbox.notify();
  }

  /**
   * Inside the transaction that removes these environments (a project, an environment or an
   * organization going): a remove command for each of their services that was deployed, its
   * data volume included when `removeVolumes`. Answers what was queued.
   */
  async queueRemovals(tx: Db, environmentIds: string[], removeVolumes: boolean): Promise<QueuedRemoval[]> {
    if (environmentIds.length === 0) return [];
    const rows = await tx.selectFrom(this.table).selectAll().where('environmentId', 'in', environmentIds).execute();
    const queued: QueuedRemoval[] = [];
    for (const row of rows) {
      if (!(await this.wasDeployed(tx, row.id))) continue;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', row, removeVolumes));
      queued.push({ kind: this.kind.kind, id: row.id, appName: row.appName, serverId: row.serverId, removeVolumes });
    }
    return queued;
  }

  /** Locks the row for the rest of the transaction and answers it; refuses new work while a removal is under way. */
  private async lockForWork(tx: Db, id: string): Promise<RowOf<K>> {
    const row = await tx.selectFrom(this.table).selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!row) throw NotFound(`No such ${this.kind.noun}`);
    if (await this.removalUnderWay(tx, id)) throw new DomainError('BAD_REQUEST', `${this.Noun} ${row.appName} is being removed`);
    return row as RowOf<K>;
  }

  private async write<T>(run: (tx: Db) => Promise<T>): Promise<T> {
    const result = await this.db.transaction().execute(run);
    this.outbox.notify();
    return result;
  }

  /**
   * Queues the deploy of the current settings (read under the row lock), after the removal
   * of its Swarm service when `recreate` or when its appName changed since the last deploy;
   * marks it `running`. Answers the deploy command's id.
   */
  private async queueDeploy(tx: Db, located: Located<K>, recreate: boolean): Promise<string> {
    const row = await this.lockForWork(tx, rowOf(located).id);
    const deploys = await deploysOf(tx, this.key(row.id));
    // A counter, not a count of deploy commands: finished commands are pruned (command-records.ts).
    const { deployCount } = await tx
      .updateTable(this.table)
      .set({ deployCount: sql<number>`deploy_count + 1` })
      .where('id', '=', row.id)
      .returning('deployCount')
      .executeTakeFirstOrThrow();
    const { env, spec } = this.prepare(withRow(located, row), deployCount);
    await assertNoForeignNetworks(tx, located.project.organizationId, row.serverId, row);
    const previous = deploys.newestPayload === null ? null : this.deployedAppName(deploys.newestPayload);
    if (recreate || (previous !== null && previous !== row.appName)) {
      await this.outbox.queue(tx, this.lifecycleCommand('remove', row, false));
    }
    const now = this.deps.clock();
    const commandId = this.deps.ids('cmd');
    const deadline = new Date(now.getTime() + this.kind.deadlineMs);
    await this.outbox.queue(tx, this.kind.deployCommand({ commandId, rolloutId: this.deps.ids('dep'), row, spec, env, createdAt: now, deadline }));
    await tx.updateTable(this.table).set({ applicationStatus: 'running' }).where('id', '=', row.id).execute();
    return commandId;
  }

  /** The variables and the service settings of a deploy; BAD_REQUEST when the agent would refuse them. */
  private prepare(located: Located<K>, forceUpdate: number) {
    const { env, spec } = this.kind.deployment(located, this.resolveEnv(located), forceUpdate);
    try {
      swarmServiceSpec({ ...spec, env: envList(env) });
    } catch (err) {
      if (err instanceof SwarmSpecError) throw new DomainError('BAD_REQUEST', `Cannot deploy ${rowOf(located).appName}: ${err.message}`);
      throw err;
    }
    return { env, spec };
  }

  /** The service name a deploy command rolled out. */
  private deployedAppName(payload: string): string | null {
    const command = this.outbox.read(payload);
    return command.payload?.$case === 'deployApplication' ? (command.payload.value.workload?.appName ?? null) : null;
  }

  private lifecycleCommand(op: WorkloadOperation, row: StatefulRow, removeVolumes = false) {
    return workloadCommand(op, {
      commandId: this.deps.ids('cmd'),
      serverId: wireServerId(row.serverId),
      workload: { kind: this.kind.kind, id: row.id, appName: row.appName },
      createdAt: this.deps.clock(),
      removeVolumes,
    });
  }

  /** The service's variables over its environment's and project's, references resolved. */
  private resolveEnv(located: Located<K>): Map<string, string> {
    const { environment, project } = located;
    const row = rowOf(located);
    const open = (sealed: string | null) => (sealed ? this.deps.secrets.open(sealed) : '');
    try {
      return resolveServiceVariables({ service: open(row.env), environment: open(environment.env), project: open(project.env) });
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }
}
