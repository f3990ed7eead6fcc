/**
 * What the control plane does with an agent's CrashLoop report (the agent's
 * deployments/crash-loops.ts): the application's status becomes `error`, `onCrashLoop` is
 * called with what its event needs (the notification comes with the events issue), and with
 * the application's `rollbackActive` on, the newest earlier done deployment is put back
 * (rollback.ts). A report naming a workload that is not an application on the reporting
 * server changes nothing. The agent sends one report per deployment; a report repeated
 * for the same deployment (an agent restarted) does not roll back twice: the crashed
 * deployment must still be the application's newest one (and done), else the status is left
 * to the newer one; a rollback deployment that crashes too is not rolled back again.
 */
import { wireServerId } from '@skiff/domain';
import type { CrashLoop } from '@skiff/proto';
import type { Logger } from 'pino';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { ServiceDeps } from '../shared/deps.js';
import { ServiceAccess } from '../shared/service-access.js';
import type { CrashLoopEvent } from './crash-loop-event.js';
import { Rollbacks } from './rollback.js';

export type { CrashLoopEvent };

export type OnCrashLoop = (event: CrashLoopEvent) => Promise<void>;

export class CrashLoops {
  private readonly rollbacks: Rollbacks;

  constructor(
    private readonly deps: ServiceDeps,
    outbox: CommandOutbox,
    private readonly options: { onCrashLoop?: OnCrashLoop; log: Logger },
  ) {
    this.rollbacks = new Rollbacks(deps, new ServiceAccess(deps.db), outbox);
  }

  /** Applies one report of server `serverId`; answers the event, or null when it named nothing of that server's. */
  async apply(serverId: string, report: CrashLoop): Promise<CrashLoopEvent | null> {
    const db = this.deps.db;
    const app = await db.selectFrom('applications').select(['id', 'appName', 'serverId', 'rollbackActive']).where('id', '=', report.workloadId).executeTakeFirst();
    if (!app || wireServerId(app.serverId) !== serverId) {
      this.options.log.warn({ serverId, workloadId: report.workloadId }, 'crash loop report for no application of this server: ignored');
      return null;
    }
    // Only while the crashed deployment is the application's newest (and done) is it rolled
    // back: a repeated report, or one after a newer deploy was queued, changes nothing more.
    const newest = await db
      .selectFrom('deployments')
      .select(['id', 'status', 'title'])
      .where('applicationId', '=', app.id)
      .orderBy('createdAt', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    const current = newest?.id === report.deploymentId && newest.status === 'done';
    if (current) await db.updateTable('applications').set({ applicationStatus: 'error' }).where('id', '=', app.id).execute();
    let rollback: CrashLoopEvent['rollback'] = null;
    if (app.rollbackActive) {
      // A rollback that crashes too is not rolled back again (two versions would take turns).
      if (!current) rollback = { none: 'a newer deployment was queued since' };
      else if (newest.title === 'Rollback') rollback = { none: 'the crashing deployment is a rollback itself' };
      else rollback = await this.rollbacks.afterCrashLoop(app.id, report.deploymentId);
    }
    const event: CrashLoopEvent = {
      applicationId: app.id,
      appName: app.appName,
      serverId: app.serverId,
      deploymentId: report.deploymentId,
      exits: report.exits,
      windowSeconds: report.windowSeconds,
      reason: report.reason,
      logLines: report.logLines.slice(-50),
      rollback,
    };
    this.options.log.warn({ applicationId: app.id, deploymentId: report.deploymentId, exits: report.exits, rollback }, 'application in a crash loop');
    await this.options.onCrashLoop?.(event);
    return event;
  }
}
