import { sql } from 'kysely';
import type { DatabaseEngine, DatabaseService, Db } from '@skiff/db';
import { EnvError, SwarmSpecError, envList, resolveServiceVariables, swarmServiceSpec, wireServerId } from '@skiff/domain';
import type { Command } from '@skiff/proto';
import { deployWasQueued, deploysOf, newestIsPendingRemoval } from '../../agents/outbound/command-records.js';
import { DATABASE_DEPLOY_DEADLINE_MS, databaseDeployCommand, databaseKey } from '../../agents/outbound/kinds/database-deploy.js';
import { type WorkloadOperation, workloadCommand } from '../../agents/outbound/kinds/workload-lifecycle.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { queuedCommand } from '../../agents/outbound/command-status.js';
import { type CommandStream, NO_COMMAND_STREAM } from '../../agents/outbound/command-withdrawal.js';
import { settleNeverReceived } from '../deployments/deployment-control.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { assertNoForeignNetworks } from '../shared/networks.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { Located } from '../shared/service-access.js';
import type { QueuedRemoval } from '../shared/service-records.js';
import { databaseVariables, databaseWorkloadSpec } from './database-spec.js';
import type { DatabaseServices } from './database.js';

const removalUnderWay = (db: Db, id: string) => newestIsPendingRemoval(db, databaseKey(id));
const wasDeployed = (db: Db, id: string) => deployWasQueued(db, databaseKey(id));

/** Locks the service's row for the rest of the transaction; refuses new work while a removal is under way. */
async function lockForWork(tx: Db, id: string): Promise<DatabaseService> {
  const row = await tx.selectFrom('databaseServices').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
  if (!row) throw NotFound('No such database service');
  if (await removalUnderWay(tx, id)) throw new DomainError('BAD_REQUEST', `Database service ${row.appName} is being removed`);
  return row;
}

/**
 * deploy, rebuild, start, stop, reload and remove of database services, and the redeploy of
 * saveExternalPort: the same rules as cache instances (cache-lifecycle.ts): each writes its
 * commands in a transaction holding the row, so its agent runs them in order; the agent's
 * results move the service on (kinds/database-deploy.ts, workload-lifecycle.ts).
 */
export class DatabaseLifecycle {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly outbox: CommandOutbox,
    private readonly databases: DatabaseServices,
    private readonly stream: CommandStream = NO_COMMAND_STREAM,
  ) {}

  private get db() {
    return this.deps.db;
  }

  async deploy(p: Principal, engine: DatabaseEngine, id: string) {
    const located = await this.databases.locate(p, engine, id);
    return queuedCommand(await this.write((tx) => this.queueDeploy(tx, located, false)));
  }

  /** A new service and container on the same data: its service removed (the volume kept) and deployed again. */
  async rebuild(p: Principal, engine: DatabaseEngine, id: string) {
    const located = await this.databases.locate(p, engine, id);
    return queuedCommand(await this.write((tx) => this.queueDeploy(tx, located, true)));
  }

  async stop(p: Principal, engine: DatabaseEngine, id: string) {
    return queuedCommand(await this.queue(p, engine, id, (row) => this.lifecycleCommand('stop', row)));
  }

  async start(p: Principal, engine: DatabaseEngine, id: string) {
    return queuedCommand(await this.queue(p, engine, id, (row) => this.lifecycleCommand('start', row)));
  }

  async reload(p: Principal, engine: DatabaseEngine, id: string, appName: string) {
    return queuedCommand(await this.queue(p, engine, id, (row) => this.lifecycleCommand('reload', row), appName));
  }

  /** Saves the port, and applies it at once to a service that was deployed; a port the deploy would refuse is refused first. */
  async saveExternalPort(p: Principal, engine: DatabaseEngine, id: string, externalPort: number | null) {
    const located = await this.databases.locate(p, engine, id);
    if (await removalUnderWay(this.db, id)) throw new DomainError('BAD_REQUEST', `Database service ${located.row.appName} is being removed`);
    const deployed = await wasDeployed(this.db, id);
    if (deployed && (externalPort === null || (Number.isInteger(externalPort) && externalPort >= 1 && externalPort <= 65535))) {
      this.prepare({ ...located, row: { ...located.row, externalPort } }, 0);
    }
    const saved = await this.databases.update(p, engine, id, { externalPort });
    if (deployed) await this.write((tx) => this.queueDeploy(tx, located, false));
    return saved;
  }

  /**
   * One never deployed (or none of whose work reached its agent) goes at once. Otherwise the
   * agent removes its service, and its data volume when `deleteVolume`; the record goes when
   * it reports them gone. Until then new work is refused and a repeated remove changes nothing.
   */
  async remove(p: Principal, engine: DatabaseEngine, id: string, deleteVolume: boolean) {
    const { row } = await this.databases.locate(p, engine, id);
    const queued = await this.db.transaction().execute(async (tx) => {
      const locked = await tx.selectFrom('databaseServices').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
      if (!locked) return false;
      if (!(await wasDeployed(tx, id)) || (await settleNeverReceived(tx, this.deps, this.stream, databaseKey(id)))) {
        await tx.deleteFrom('databaseServices').where('id', '=', id).execute();
        return false;
      }
      if (await removalUnderWay(tx, id)) return false;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', locked, deleteVolume));
      return true;
    });
    if (queued) this.outbox.notify();
    return this.databases.record(row);
  }

  /** In the transaction removing these environments: a remove command for each deployed service (volumes by default). */
  async queueRemovals(tx: Db, environmentIds: string[], { removeVolumes = true }: { removeVolumes?: boolean } = {}): Promise<QueuedRemoval[]> {
    if (environmentIds.length === 0) return [];
    const rows = await tx.selectFrom('databaseServices').selectAll().where('environmentId', 'in', environmentIds).execute();
    const queued: QueuedRemoval[] = [];
    for (const row of rows) {
      if (!(await wasDeployed(tx, row.id))) continue;
      await this.outbox.queue(tx, this.lifecycleCommand('remove', row, removeVolumes));
      queued.push({ kind: 'database', id: row.id, appName: row.appName, serverId: row.serverId, removeVolumes });
    }
    return queued;
  }

  /** Queues the command `build` makes of a deployed service not being removed; `appName`, when given, must be its own. */
  private async queue(p: Principal, engine: DatabaseEngine, id: string, build: (row: DatabaseService) => Command, appName?: string) {
    const { row } = await this.databases.locate(p, engine, id);
    if (appName !== undefined && appName !== row.appName) throw Invalid('appName', `is not the appName of database service ${id}`);
    return this.write(async (tx) => {
      const locked = await lockForWork(tx, id);
      if (!(await wasDeployed(tx, id))) throw new DomainError('BAD_REQUEST', `Database service ${locked.appName} was never deployed: deploy it first`);
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

  /** Queues the deploy of the current settings (after removing the old service when `recreate` or renamed); marks it `running`. */
  private async queueDeploy(tx: Db, located: Located<'database'>, recreate: boolean): Promise<string> {
    const row = await lockForWork(tx, located.row.id);
    const deploys = await deploysOf(tx, databaseKey(row.id));
    const { deployCount } = await tx
      .updateTable('databaseServices')
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
      databaseDeployCommand({
        commandId,
        rolloutId: this.deps.ids('dep'),
        database: row,
        spec,
        env,
        createdAt: now,
        deadline: new Date(now.getTime() + DATABASE_DEPLOY_DEADLINE_MS),
      }),
    );
    await tx.updateTable('databaseServices').set({ applicationStatus: 'running' }).where('id', '=', row.id).execute();
    return commandId;
  }

  /** The variables and the service settings of a deploy; BAD_REQUEST when the agent would refuse them. */
  private prepare(located: Located<'database'>, forceUpdate: number) {
    const { row } = located;
    const credentials = this.databases.credentials(row);
    const env = databaseVariables(row, credentials, this.resolveEnv(located));
    const spec = databaseWorkloadSpec(row, credentials, forceUpdate);
    try {
      swarmServiceSpec({ ...spec, env: envList(env) });
    } catch (err) {
      if (err instanceof SwarmSpecError) throw new DomainError('BAD_REQUEST', `Cannot deploy ${row.appName}: ${err.message}`);
      throw err;
    }
    return { env, spec };
  }

  private deployedAppName(payload: string): string | null {
    const command = this.outbox.read(payload);
    return command.payload?.$case === 'deployApplication' ? (command.payload.value.workload?.appName ?? null) : null;
  }

  private lifecycleCommand(op: WorkloadOperation, row: DatabaseService, removeVolumes = false) {
    return workloadCommand(op, {
      commandId: this.deps.ids('cmd'),
      serverId: wireServerId(row.serverId),
      workload: { kind: 'database', id: row.id, appName: row.appName },
      createdAt: this.deps.clock(),
      removeVolumes,
    });
  }

  /** The service's variables over its environment's and project's, references resolved. */
  private resolveEnv({ row, environment, project }: Located<'database'>): Map<string, string> {
    const open = (sealed: string | null) => (sealed ? this.deps.secrets.open(sealed) : '');
    try {
      return resolveServiceVariables({ service: open(row.env), environment: open(environment.env), project: open(project.env) });
    } catch (err) {
      if (err instanceof EnvError) throw Invalid('env', err.message);
      throw err;
    }
  }
}
