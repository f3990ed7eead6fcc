import type { Db } from '@skiff/db';
import { CommandKind, commandKindToJSON } from '@skiff/proto';
import type { AgentControl } from '../agents/control-client.js';
import { serverLabel } from '../agents/control-client.js';
import type { Principal } from '../authz/principal.js';
import { DomainError } from '../errors.js';
import { workloadKey } from './deploy-command.js';
import { canMove } from './deployment-status.js';
import type { ServiceDeps } from './deps.js';
import type { ServiceAccess } from './service-access.js';

/** The reasons cancelled work ends with; the agent uses the same words (apps/agent control/command-control.ts). */
export const CANCEL_REASON = 'cancelled by the user';
export const KILL_BUILD_REASON = 'the build was killed by the user';
export const REMOVED_REASON = 'removed from the queue by the user';

const DEPLOY_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_DEPLOY_APPLICATION);
const STOP_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_STOP_WORKLOAD);
const START_KIND = commandKindToJSON(CommandKind.COMMAND_KIND_START_WORKLOAD);

interface QueuedCommand {
  id: string;
  serverId: string;
  kind: string;
  deploymentId: string | null;
  status: 'pending' | 'published' | 'done' | 'failed';
}

export interface CancelResult {
  deploymentIds: string[];
}

/**
 * `application.cancelDeployment`, `killBuild` and `cleanQueues` (ARCHITECTURE.md "Commands" 5,
 * REFERENCE.md "Deploy queue"). An application's jobs are its unfinished commands, in
 * order; the first is the one that runs (or runs next).
 *
 * - A command still in the outbox (`pending`: never published) is ended here, in the
 *   transaction that holds its row, so the relay (which holds the row while it publishes)
 *   either published it before, or never will.
 * - Anything the agent holds is cancelled by the agent, through a control request (not
 *   queued; agents/control-client.ts). A cancelled running command ends through the agent's
 *   reports (CANCELLED event and result), so the record says what the agent really did; the
 *   commands an agent removed from its queue are ended here as well, at once (the agent
 *   journaled them as cancelled before it answered, so they never run).
 * - Permissions: those of `application.deploy` (a caller who may see the application).
 */
export class DeploymentControl {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly agents: AgentControl,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Stops the application's current job, whatever it does (build, pull, rollout, a stop…). */
  cancelDeployment(p: Principal, applicationId: string): Promise<CancelResult> {
    return this.cancel(p, applicationId, false);
  }

  /** Stops the application's current deployment only while it builds. */
  killBuild(p: Principal, applicationId: string): Promise<CancelResult> {
    return this.cancel(p, applicationId, true);
  }

  /** Removes every job of the application that does not run yet. */
  async cleanQueues(p: Principal, applicationId: string): Promise<CancelResult> {
    const { row: app } = await this.access.find(p, 'application', applicationId);
    const key = workloadKey('application', app.id);
    const queued = await this.unfinished(key);
    if (queued.length === 0) throw nothing(`Nothing waits in the queue of application ${app.appName}`);

    // Not sent yet: ended here (the relay cannot send them any more).
    const here = await this.endCommands(
      queued.filter((c) => c.status === 'pending').map((c) => c.id),
      REMOVED_REASON,
      'pending',
    );
    // What the agent holds (re-read: the relay may have published some meanwhile).
    const held = (await this.unfinished(key)).filter((c) => c.status === 'published');
    let there: string[] = [];
    if (held.length > 0) {
      const serverId = held[0].serverId;
      let reply;
      try {
        // The ids let the agent refuse those still on their way to it (published, not taken in yet).
        const commandIds = held.filter((c) => c.serverId === serverId).map((c) => c.id);
        reply = await this.agents.request(serverId, { request: { $case: 'cleanQueue', value: { workloadKey: key, commandIds } } });
      } catch (err) {
        if (here.commandIds.length === 0 || !(err instanceof DomainError)) throw err;
        throw new DomainError(
          'BAD_REQUEST',
          `${err.message}. ${here.commandIds.length} job(s) of application ${app.appName} that had not reached it were removed; those it holds stay queued`,
        );
      }
      if (reply.commandIds.length > 0) {
        // The agent's own CANCELLED reports may have ended some already: answer them all.
        await this.endCommands(reply.commandIds, REMOVED_REASON, 'held');
        there = await this.deploymentsOf(reply.commandIds);
      }
      if (reply.error && here.commandIds.length === 0 && reply.commandIds.length === 0) {
        throw nothing(`Nothing waits in the queue of application ${app.appName}: the agent of ${serverLabel(serverId)} says ${reply.error}`);
      }
    } else if (here.commandIds.length === 0) {
      throw nothing(`Nothing waits in the queue of application ${app.appName}`);
    }
    return { deploymentIds: [...here.deploymentIds, ...there] };
  }

  private async cancel(p: Principal, applicationId: string, buildOnly: boolean): Promise<CancelResult> {
    const { row: app } = await this.access.find(p, 'application', applicationId);
    const key = workloadKey('application', app.id);
    const [head] = await this.unfinished(key);
    if (!head) throw nothing(`Nothing to cancel: no job of application ${app.appName} is queued or running`);
    if (buildOnly && head.kind !== DEPLOY_KIND) {
      throw nothing(`No build of application ${app.appName} runs: its current job is not a deployment`);
    }
    const reason = buildOnly ? KILL_BUILD_REASON : CANCEL_REASON;
    if (head.status === 'pending') {
      const ended = await this.endCommands([head.id], reason, 'pending');
      if (ended.commandIds.length > 0) return { deploymentIds: ended.deploymentIds };
      // Published in the meantime: the agent has it now.
    }
    const reply = await this.agents.request(head.serverId, {
      request: { $case: 'cancelWorkload', value: { workloadKey: key, deploymentId: '', buildOnly } },
    });
    if (reply.error) {
      throw nothing(`Nothing was cancelled for application ${app.appName}: the agent of ${serverLabel(head.serverId)} says ${reply.error}`);
    }
    return { deploymentIds: await this.deploymentsOf(reply.commandIds) };
  }

  /** The workload's commands without a result, in queue order. */
  private unfinished(key: string): Promise<QueuedCommand[]> {
    return this.db
      .selectFrom('commands')
      .select(['id', 'serverId', 'kind', 'deploymentId', 'status'])
      .where('workloadKey', '=', key)
      .where('status', 'in', ['pending', 'published'])
      .orderBy('position')
      .execute();
  }

  private async deploymentsOf(commandIds: string[]): Promise<string[]> {
    if (commandIds.length === 0) return [];
    const rows = await this.db.selectFrom('commands').select('deploymentId').where('id', 'in', commandIds).orderBy('position').execute();
    return rows.flatMap((r) => (r.deploymentId ? [r.deploymentId] : []));
  }

  /**
   * Ends commands that will never run as the agent would report a CANCELLED result: the
   * command failed with the reason, its deployment cancelled. `pending`: only if still
   * unpublished (the row lock orders this against the relay); `held`: the agent dropped them.
   */
  private async endCommands(ids: string[], reason: string, which: 'pending' | 'held') {
    const commandIds: string[] = [];
    const deploymentIds: string[] = [];
    for (const id of ids) {
      await this.db.transaction().execute(async (tx) => {
        const c = await tx
          .selectFrom('commands')
          .select(['id', 'deploymentId'])
          .where('id', '=', id)
          .where('status', 'in', which === 'pending' ? ['pending'] : ['pending', 'published'])
          .forUpdate()
          .executeTakeFirst();
        if (!c) return;
        const at = this.deps.clock();
        await tx.updateTable('commands').set({ status: 'failed', finishedAt: at, resultReason: reason }).where('id', '=', id).execute();
        commandIds.push(id);
        if (!c.deploymentId) return;
        if (await cancelDeploymentRow(tx, c.deploymentId, reason, at)) deploymentIds.push(c.deploymentId);
      });
    }
    return { commandIds, deploymentIds };
  }
}

/** Moves a deployment to cancelled (when it may still move), restoring its application's status. */
async function cancelDeploymentRow(tx: Db, deploymentId: string, reason: string, at: Date): Promise<boolean> {
  const d = await tx.selectFrom('deployments').select(['id', 'status', 'applicationId']).where('id', '=', deploymentId).forUpdate().executeTakeFirst();
  if (!d || !canMove(d.status, 'cancelled')) return false;
  await tx.updateTable('deployments').set({ status: 'cancelled', reason, finishedAt: at }).where('id', '=', d.id).execute();
  if (d.status === 'running') {
    const status = await applicationStatusAfterCancel(tx, d.applicationId, d.id);
    await tx.updateTable('applications').set({ applicationStatus: status }).where('id', '=', d.applicationId).execute();
  }
  return true;
}

/**
 * The application's status once its running deployment `deploymentId` was cancelled: the
 * agent put the previous version back (or removed the service this deployment created), so
 * the application is as the last thing that ended before left it:
 *
 * - the newest other deployment that ended `done` or `error` → `done` / `error`;
 * - a stop that succeeded after it → `idle` (the previous spec has no running task); a start
 *   that succeeded after it → `done`;
 * - no such deployment → `idle` (nothing was deployed before: the service is removed).
 *
 * Used when a deployment moves from `running` to `cancelled` (here, and when the agent
 * reports it: deployment-reports.ts). A deployment cancelled while queued never moved the
 * application, so it is left as it is.
 */
export async function applicationStatusAfterCancel(tx: Db, applicationId: string, deploymentId: string): Promise<'idle' | 'done' | 'error'> {
  const deployment = await tx
    .selectFrom('deployments')
    .select(['status', 'finishedAt'])
    .where('applicationId', '=', applicationId)
    .where('id', '!=', deploymentId)
    .where('status', 'in', ['done', 'error'])
    .where('finishedAt', 'is not', null)
    .orderBy('finishedAt', 'desc')
    .limit(1)
    .executeTakeFirst();
  const lifecycle = await tx
    .selectFrom('commands')
    .select(['kind', 'finishedAt'])
    .where('workloadKey', '=', workloadKey('application', applicationId))
    .where('kind', 'in', [STOP_KIND, START_KIND])
    .where('status', '=', 'done')
    .where('finishedAt', 'is not', null)
    .orderBy('finishedAt', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!deployment) return 'idle';
  if (lifecycle && lifecycle.finishedAt! > deployment.finishedAt!) return lifecycle.kind === STOP_KIND ? 'idle' : 'done';
  return deployment.status === 'done' ? 'done' : 'error';
}

const nothing = (message: string) => new DomainError('BAD_REQUEST', message);
