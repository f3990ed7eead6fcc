import type { Db } from '@skiff/db';
import { wireServerId } from '@skiff/domain';
import type { Principal } from '../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../errors.js';
import type { ApplicationService } from './applications.js';
import type { CommandOutbox } from './command-outbox.js';
import type { ServiceDeps } from './deps.js';
import type { ProxyConfig } from './proxy-config.js';
import type { ServiceAccess } from './service-access.js';
import { type WorkloadOperation, lockApplicationForWork, removalPending, workloadCommand } from './workload-commands.js';

export interface ApplicationLifecycleOptions {
  /** Called after a command was committed, so the relay publishes it without waiting for its poll. */
  onCommandQueued?: () => void;
}

/**
 * `application.stop`, `start`, `reload` and `delete`: each writes its command to the outbox,
 * in a transaction that holds the application's row, so the agent receives the commands of
 * one application in the order they were accepted, after any deploy accepted before them.
 * The agent's results move the application on (workload-commands.ts, applyWorkloadResult).
 */
export class ApplicationLifecycle {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    private readonly apps: ApplicationService,
    private readonly proxy: ProxyConfig,
    private readonly options: ApplicationLifecycleOptions = {},
  ) {}

  private get db() {
    return this.deps.db;
  }

  async stop(p: Principal, applicationId: string) {
    await this.queue(p, applicationId, 'stop');
    return {};
  }

  async start(p: Principal, applicationId: string) {
    await this.queue(p, applicationId, 'start');
    return {};
  }

  /** `appName` must be the application's own: a mismatch is a client mix-up, refused. */
  async reload(p: Principal, input: { applicationId: string; appName: string }) {
    await this.queue(p, input.applicationId, 'reload', input.appName);
    return {};
  }

  /**
   * An application that was never deployed is deleted at once. Otherwise its workload is
   * removed first: the remove command joins its queue and the record (with its domains,
   * deployments…) is deleted when the agent reports the service gone; until then it is
   * "being deleted" (new work is refused, a repeated delete changes nothing). A failed
   * removal leaves the record with `applicationStatus: error`; delete can be called again.
   */
  async delete(p: Principal, applicationId: string) {
    const { row } = await this.access.find(p, 'application', applicationId);
    const queued = await this.db.transaction().execute(async (tx) => {
      const app = await tx.selectFrom('applications').selectAll().where('id', '=', applicationId).forUpdate().executeTakeFirst();
      if (!app) throw NotFound('No such application');
      if (await removalPending(tx, applicationId)) return false;
      if (!(await wasDeployed(tx, applicationId))) {
        // Its domains go with it (cascade), and so do their routes.
        const configs = await this.proxy.removing(tx, { applicationId }, () => tx.deleteFrom('applications').where('id', '=', applicationId).execute());
        return configs > 0;
      }
      await this.outbox.queue(tx, this.command('remove', app));
      return true;
    });
    if (queued) this.options.onCommandQueued?.();
    return this.apps.record(row);
  }

  /**
   * Inside the transaction that removes these environments (a project, an environment or an
   * organization going): a remove command for each of their applications that was deployed,
   * so no Swarm service outlives its record. Answers how many were queued; call `notify()`
   * after the commit when any were.
   */
  async queueRemovals(tx: Db, environmentIds: string[]): Promise<number> {
    if (environmentIds.length === 0) return 0;
    const deployed = await tx
      .selectFrom('applications')
      .select(['id', 'appName', 'serverId'])
      .where('environmentId', 'in', environmentIds)
      .where((eb) => eb.exists(eb.selectFrom('deployments').select('deployments.id').whereRef('deployments.applicationId', '=', 'applications.id')))
      .execute();
    for (const app of deployed) await this.outbox.queue(tx, this.command('remove', app));
    return deployed.length;
  }

  notify(): void {
    this.options.onCommandQueued?.();
  }

  private async queue(p: Principal, applicationId: string, op: WorkloadOperation, appName?: string): Promise<void> {
    const { row } = await this.access.find(p, 'application', applicationId);
    if (appName !== undefined && appName !== row.appName) {
      throw Invalid('appName', `is not the appName of application ${applicationId}`);
    }
    await this.db.transaction().execute(async (tx) => {
      await lockApplicationForWork(tx, applicationId);
      const app = await tx.selectFrom('applications').selectAll().where('id', '=', applicationId).executeTakeFirst();
      if (!app) throw NotFound('No such application');
      if (!(await wasDeployed(tx, applicationId))) {
        throw new DomainError('BAD_REQUEST', `Application ${app.appName} was never deployed: deploy it first (application.deploy)`);
      }
      await this.outbox.queue(tx, this.command(op, app));
    });
    this.options.onCommandQueued?.();
  }

  private command(op: WorkloadOperation, app: { id: string; appName: string; serverId: string | null }) {
    return workloadCommand(op, {
      commandId: this.deps.ids('cmd'),
      serverId: wireServerId(app.serverId),
      workload: { kind: 'application', id: app.id, appName: app.appName },
      createdAt: this.deps.clock(),
    });
  }
}

/** Whether a deploy of the application was ever queued: only then may it have a workload. */
async function wasDeployed(db: Db, applicationId: string): Promise<boolean> {
  const row = await db.selectFrom('deployments').select('id').where('applicationId', '=', applicationId).limit(1).executeTakeFirst();
  return row !== undefined;
}
