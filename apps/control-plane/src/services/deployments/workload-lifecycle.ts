import type { Db } from '@skiff/db';
import { wireServerId } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Invalid, NotFound } from '../../errors.js';
import { removalPending } from '../../agents/outbound/command-records.js';
import { type WorkloadOperation, workloadCommand } from '../../agents/outbound/kinds/workload-lifecycle.js';
import { workloadKey } from '../../agents/outbound/workload-key.js';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import { type QueuedCommand, queuedCommand } from '../../agents/outbound/command-status.js';
import { type CommandStream, NO_COMMAND_STREAM } from '../../agents/outbound/command-withdrawal.js';
import { settleNeverReceived } from './deployment-control.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { QueuedRemoval } from '../shared/service-records.js';
import type { ProxyConfig } from '../domains/proxy-config.js';
import type { Located, ServiceAccess } from '../shared/service-access.js';
import {
  DEPLOYED_KINDS,
  type DeployedKind,
  type WorkloadOwner,
  deleteWorkloadRecord,
  lockWorkloadForWork,
  wasDeployed,
  workloadRow,
  workloadTitle,
} from './workloads.js';

/**
 * `stop`, `start`, `reload` and `delete` of one kind of workload (`application.*`,
 * `compose.*`): each writes its command to the outbox, in a transaction that holds the
 * workload's row, so the agent receives the commands of one workload in the order they were
 * accepted, after any deploy accepted before them. The agent's results move the workload on
 * (agents/outbound/kinds/workload-lifecycle.ts).
 */
export class WorkloadLifecycle<K extends DeployedKind, R> {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly outbox: CommandOutbox,
    private readonly proxy: ProxyConfig,
    private readonly kind: K,
    /** The record the delete answers. */
    private readonly record: (row: Located<K>['row']) => R,
    private readonly stream: CommandStream = NO_COMMAND_STREAM,
    /** Deletes the files of archives whose rows went (an application deleted at once takes its archives' rows). */
    private readonly archives?: { removeFiles(): Promise<void> },
  ) {}

  private get db() {
    return this.deps.db;
  }

  stop(p: Principal, id: string) {
    return this.queue(p, id, 'stop');
  }

  start(p: Principal, id: string) {
    return this.queue(p, id, 'start');
  }

  /** `appName` must be the workload's own: a mismatch is a client mix-up, refused. */
  reload(p: Principal, id: string, appName: string) {
    return this.queue(p, id, 'reload', appName);
  }

  /**
   * A workload that was never deployed is deleted at once. Otherwise its Docker objects are
   * removed first (with its volumes when `removeVolumes`): the remove command joins its queue
   * and the record (with its domains, deployments…) is deleted when the agent reports them
   * gone; until then it is "being deleted" (new work is refused, a repeated delete changes
   * nothing). A failed removal leaves the record with `applicationStatus: error`; delete can
   * be called again. A workload none of whose work ever reached its agent (say it is offline
   * since) is deleted at once too, its queued work withdrawn (settleNeverReceived).
   */
  async delete(p: Principal, id: string, { removeVolumes = false }: { removeVolumes?: boolean } = {}): Promise<R> {
    const { row } = await this.access.find(p, this.kind, id);
    const owner = this.owner(id);
    const outcome = await this.db.transaction().execute(async (tx) => {
      const workload = await workloadRow(tx, owner, true);
      if (!workload) throw NotFound(`No such ${DEPLOYED_KINDS[this.kind].label}`);
      const key = workloadKey(owner.kind, owner.id);
      if (!(await wasDeployed(tx, owner)) || (await settleNeverReceived(tx, this.deps, this.stream, key))) {
        // Its domains go with it (cascade), and so do their routes.
        return { queued: (await deleteWorkloadRecord(tx, owner, this.proxy)) > 0, deleted: true };
      }
      if (await removalPending(tx, key)) return { queued: false, deleted: false };
      await this.outbox.queue(tx, this.command('remove', workload, removeVolumes));
      return { queued: true, deleted: false };
    });
    if (outcome.queued) this.outbox.notify();
    if (outcome.deleted) await this.archives?.removeFiles();
    return this.record(row);
  }

  /**
   * Inside the transaction that removes these environments (a project, an environment or an
   * organization going): a remove command for each of their workloads of this kind that was
   * deployed, so no Docker object outlives its record (volumes only when `removeVolumes`).
   * Answers what was queued; call the outbox's `notify()` after the commit when anything was.
   */
  async queueRemovals(tx: Db, environmentIds: string[], { removeVolumes = false }: { removeVolumes?: boolean } = {}): Promise<QueuedRemoval[]> {
    if (environmentIds.length === 0) return [];
    const { table, deploymentColumn } = DEPLOYED_KINDS[this.kind];
    const deployed = await tx
      .selectFrom(table as 'applications')
      .select(['id', 'appName', 'serverId'])
      .where('environmentId', 'in', environmentIds)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom('deployments')
            .select('deployments.id')
            .whereRef(`deployments.${deploymentColumn}` as 'deployments.applicationId', '=', `${table}.id` as 'applications.id'),
        ),
      )
      .execute();
    // A compose stack's named volumes, an application's mounted ones (a cache's: cache-lifecycle.ts).
    const volumes = removeVolumes;
    for (const workload of deployed) await this.outbox.queue(tx, this.command('remove', workload, volumes));
    const previews = this.kind === 'application' ? await this.queuePreviewRemovals(tx, environmentIds) : [];
    return [...deployed.map((w) => ({ kind: this.kind, id: w.id, appName: w.appName, serverId: w.serverId, removeVolumes: volumes })), ...previews];
  }

  /**
   * The previews of the environments' applications that were ever deployed: each is its own
   * Swarm service (named and labelled with the preview's appName and id), removed like an
   * application; their records and domains go by cascade with the application's.
   */
  private async queuePreviewRemovals(tx: Db, environmentIds: string[]): Promise<QueuedRemoval[]> {
    const previews = await tx
      .selectFrom('previewDeployments')
      .innerJoin('applications', 'applications.id', 'previewDeployments.applicationId')
      .select(['previewDeployments.id', 'previewDeployments.appName', 'applications.serverId'])
      .where('applications.environmentId', 'in', environmentIds)
      .where((eb) => eb.exists(eb.selectFrom('deployments').select('deployments.id').whereRef('deployments.previewDeploymentId', '=', 'previewDeployments.id')))
      .execute();
    for (const preview of previews) await this.outbox.queue(tx, this.command('remove', preview));
    return previews.map((w) => ({ kind: 'application' as const, id: w.id, appName: w.appName, serverId: w.serverId, removeVolumes: false }));
  }

  private owner(id: string): WorkloadOwner {
    return { kind: this.kind, id };
  }

  /** Answers the command queued, for the caller to follow (`command.one`). */
  private async queue(p: Principal, id: string, op: WorkloadOperation, appName?: string): Promise<QueuedCommand> {
    const { row } = await this.access.find(p, this.kind, id);
    if (appName !== undefined && appName !== (row as { appName: string }).appName) {
      throw Invalid('appName', `is not the appName of ${DEPLOYED_KINDS[this.kind].label} ${id}`);
    }
    const owner = this.owner(id);
    const commandId = await this.db.transaction().execute(async (tx) => {
      await lockWorkloadForWork(tx, owner);
      const workload = await workloadRow(tx, owner);
      if (!workload) throw NotFound(`No such ${DEPLOYED_KINDS[this.kind].label}`);
      if (!(await wasDeployed(tx, owner))) {
        throw new DomainError('BAD_REQUEST', `${workloadTitle(this.kind, workload.appName)} was never deployed: deploy it first (${this.kind}.deploy)`);
      }
      const command = this.command(op, workload);
      await this.outbox.queue(tx, command);
      return command.commandId;
    });
    this.outbox.notify();
    return queuedCommand(commandId);
  }

  private command(op: WorkloadOperation, workload: { id: string; appName: string; serverId: string | null }, removeVolumes = false) {
    return workloadCommand(op, {
      commandId: this.deps.ids('cmd'),
      serverId: wireServerId(workload.serverId),
      workload: { kind: this.kind, id: workload.id, appName: workload.appName },
      createdAt: this.deps.clock(),
      removeVolumes,
    });
  }
}
