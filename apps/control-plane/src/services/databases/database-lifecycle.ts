import type { DatabaseEngine, Db } from '@skiff/db';
import { DATABASE_DEPLOY_DEADLINE_MS, databaseDeployCommand } from '../../agents/outbound/kinds/database-deploy.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { type CommandStream, NO_COMMAND_STREAM } from '../../agents/outbound/command-withdrawal.js';
import type { Principal } from '../../authz/principal.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { QueuedRemoval } from '../shared/service-records.js';
import { type LifecycleKind, StatefulLifecycle } from '../stateful/stateful-lifecycle.js';
import { databaseVariables, databaseWorkloadSpec } from './database-spec.js';
import type { DatabaseServices } from './database.js';

/**
 * deploy, rebuild, start, stop, reload and remove of database services, and the redeploy of
 * saveExternalPort: the same lifecycle as cache instances (stateful-lifecycle.ts), on the
 * services of one engine; the engine's own part is its deploy (its variables and spec).
 */
export class DatabaseLifecycle {
  private readonly runner: StatefulLifecycle<'database'>;

  constructor(
    deps: ServiceDeps,
    outbox: CommandOutbox,
    private readonly databases: DatabaseServices,
    stream: CommandStream = NO_COMMAND_STREAM,
  ) {
    const kind: LifecycleKind<'database'> = {
      kind: 'database',
      noun: 'database service',
      deployHint: '',
      deadlineMs: DATABASE_DEPLOY_DEADLINE_MS,
      deployCommand: ({ row, ...rest }) => databaseDeployCommand({ ...rest, database: row }),
      deployment: ({ row }, variables, forceUpdate) => {
        const credentials = databases.credentials(row);
        return { env: databaseVariables(row, credentials, variables), spec: databaseWorkloadSpec(row, credentials, forceUpdate) };
      },
    };
    this.runner = new StatefulLifecycle(deps, outbox, stream, kind);
  }

  async deploy(p: Principal, engine: DatabaseEngine, id: string) {
    return this.runner.deploy(await this.databases.locate(p, engine, id), false);
  }

  /** A new service and container on the same data: its service removed (the volume kept) and deployed again. */
  async rebuild(p: Principal, engine: DatabaseEngine, id: string) {
    return this.runner.deploy(await this.databases.locate(p, engine, id), true);
  }

  async stop(p: Principal, engine: DatabaseEngine, id: string) {
    return this.runner.run('stop', await this.databases.locate(p, engine, id));
  }

  async start(p: Principal, engine: DatabaseEngine, id: string) {
    return this.runner.run('start', await this.databases.locate(p, engine, id));
  }

  async reload(p: Principal, engine: DatabaseEngine, id: string, appName: string) {
    return this.runner.run('reload', await this.databases.locate(p, engine, id), appName);
  }

  /** Saves the port, and applies it at once to a service that was deployed; a port the deploy would refuse is refused first. */
  async saveExternalPort(p: Principal, engine: DatabaseEngine, id: string, externalPort: number | null) {
    const located = await this.databases.locate(p, engine, id);
    return this.runner.saveExternalPort(located, externalPort, () => this.databases.update(p, engine, id, { externalPort }));
  }

  /** Removes the service, its data volume when `deleteVolume` (StatefulLifecycle.remove). */
  async remove(p: Principal, engine: DatabaseEngine, id: string, deleteVolume: boolean) {
    const located = await this.databases.locate(p, engine, id);
    await this.runner.remove(located, deleteVolume);
    return this.databases.record(located.row);
  }

  /** In the transaction removing these environments: a remove command for each deployed service (volumes by default). */
  queueRemovals(tx: Db, environmentIds: string[], { removeVolumes = true }: { removeVolumes?: boolean } = {}): Promise<QueuedRemoval[]> {
    return this.runner.queueRemovals(tx, environmentIds, removeVolumes);
  }
}
