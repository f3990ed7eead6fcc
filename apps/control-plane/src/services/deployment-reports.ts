import type { Db, DeploymentStatus as StoredStatus } from '@skiff/db';
import {
  type CommandResult,
  CommandStatus,
  type DeploymentEvent,
  DeploymentStatus,
  commandStatusToJSON,
  timestampToDate,
} from '@skiff/proto';
import { applyCacheResult, isCacheDeployEvent } from './cache-commands.js';
import { appendLog, applicationStatusAfterCancel, applicationStatusFor, canMove, isFinished } from './deployment-status.js';
import type { ProxyConfig } from './proxy-config.js';
import { applyWorkloadResult } from './workload-commands.js';
import { ownerOfDeployment, setWorkloadStatus } from './workloads.js';

/** A report the control plane will not apply; `code` says why (the report server maps it to a gRPC status). */
export class ReportRefused extends Error {
  constructor(
    readonly code: 'NOT_FOUND' | 'INVALID_ARGUMENT',
    message: string,
  ) {
    super(message);
  }
}

const STATUS: Partial<Record<DeploymentStatus, StoredStatus>> = {
  [DeploymentStatus.DEPLOYMENT_STATUS_RUNNING]: 'running',
  [DeploymentStatus.DEPLOYMENT_STATUS_DONE]: 'done',
  [DeploymentStatus.DEPLOYMENT_STATUS_ERROR]: 'error',
  [DeploymentStatus.DEPLOYMENT_STATUS_CANCELLED]: 'cancelled',
};

/** Command results that end an unfinished deployment, and how. */
const DEPLOYMENT_END: Partial<Record<CommandStatus, StoredStatus>> = {
  [CommandStatus.COMMAND_STATUS_FAILED]: 'error',
  [CommandStatus.COMMAND_STATUS_EXPIRED]: 'error',
  [CommandStatus.COMMAND_STATUS_REJECTED]: 'error',
  [CommandStatus.COMMAND_STATUS_CANCELLED]: 'cancelled',
};

const DEFAULT_REASON: Partial<Record<CommandStatus, string>> = {
  [CommandStatus.COMMAND_STATUS_FAILED]: 'the agent reported the command failed',
  [CommandStatus.COMMAND_STATUS_EXPIRED]: "the command's deadline passed before the agent could run it",
  [CommandStatus.COMMAND_STATUS_REJECTED]: 'the agent rejected the command',
  [CommandStatus.COMMAND_STATUS_CANCELLED]: 'cancelled',
};

export type Applied = 'applied' | 'duplicate';

/**
 * What agents report, applied to deployments, commands and workloads (applications and
 * compose stacks). Every report names its server (from the agent's credential, never from
 * the message): a record of another server is NOT_FOUND to it.
 */
export class DeploymentReports {
  /** `proxy`: to reconfigure the servers whose routes go with a removed workload. */
  constructor(private readonly deps: { db: Db; clock: () => Date; proxy?: ProxyConfig }) {}

  /**
   * One deployment event: de-duplicated by sequence (an event at or below the highest
   * applied one changes nothing), then its status (when the move is allowed), log lines
   * and reason, and the workload's status.
   */
  async applyEvent(serverId: string, event: DeploymentEvent): Promise<Applied> {
    const sequence = Number(event.sequence);
    if (!Number.isSafeInteger(sequence) || sequence < 1 || sequence > 2 ** 31 - 1) {
      throw new ReportRefused('INVALID_ARGUMENT', `sequence must be a whole number from 1, got ${event.sequence}`);
    }
    const at = event.occurredAt ? timestampToDate(event.occurredAt) : this.deps.clock();
    return this.deps.db.transaction().execute(async (tx) => {
      const d = await tx.selectFrom('deployments').selectAll().where('id', '=', event.deploymentId).forUpdate().executeTakeFirst();
      // A cache instance keeps no deployment records: the events of its deploys are set aside.
      if (!d && (await isCacheDeployEvent(tx, serverId, event.commandId))) return 'applied';
      if (!d || d.serverId !== serverId) throw new ReportRefused('NOT_FOUND', `no deployment ${event.deploymentId} on this server`);
      if (sequence <= d.lastSequence) return 'duplicate';

      const wanted = STATUS[event.status];
      const next = wanted && canMove(d.status, wanted) ? wanted : undefined;
      const lines = event.logLines.map((l) => l.text);
      await tx
        .updateTable('deployments')
        .set({
          lastSequence: sequence,
          log: appendLog(d.log, lines),
          ...(next && {
            status: next,
            ...(next === 'running' && !d.startedAt && { startedAt: at }),
            ...(isFinished(next) && { finishedAt: at, reason: event.reason || null }),
          }),
        })
        .where('id', '=', d.id)
        .execute();
      const owner = ownerOfDeployment(d);
      const appStatus =
        next === 'cancelled' && d.status === 'running' ? await applicationStatusAfterCancel(tx, owner, d.id) : next && applicationStatusFor(next);
      if (appStatus) await setWorkloadStatus(tx, owner, appStatus);
      return 'applied';
    });
  }

  /**
   * How a command ended: the command is marked done or failed, with its reason. A deploy
   * command that failed, expired or was rejected ends its deployment in error (a cancelled
   * one as cancelled) when the agent's events have not ended it already. A stop, start,
   * reload or remove command moves its workload as workload-commands.ts says.
   */
  async applyCommandResult(serverId: string, result: CommandResult): Promise<Applied> {
    if (result.status === CommandStatus.COMMAND_STATUS_UNSPECIFIED || result.status === CommandStatus.UNRECOGNIZED) {
      throw new ReportRefused('INVALID_ARGUMENT', 'status is required');
    }
    const succeeded = result.status === CommandStatus.COMMAND_STATUS_SUCCEEDED;
    const at = result.finishedAt ? timestampToDate(result.finishedAt) : this.deps.clock();
    const reason = succeeded ? null : result.reason || DEFAULT_REASON[result.status] || commandStatusToJSON(result.status);
    const applied = await this.deps.db.transaction().execute(async (tx) => {
      const c = await tx.selectFrom('commands').selectAll().where('id', '=', result.commandId).forUpdate().executeTakeFirst();
      if (!c || c.serverId !== serverId) throw new ReportRefused('NOT_FOUND', `no command ${result.commandId} for this server`);
      if (c.status === 'done' || c.status === 'failed') return 'duplicate';
      await tx
        .updateTable('commands')
        .set({ status: succeeded ? 'done' : 'failed', finishedAt: at, resultReason: reason })
        .where('id', '=', c.id)
        .execute();

      // A cancelled stop, start, reload or remove never ran (or was stopped): its workload keeps its status.
      if (await applyCacheResult(tx, c, result.status)) return 'applied';
      const cancelled = result.status === CommandStatus.COMMAND_STATUS_CANCELLED;
      if (!cancelled && (await applyWorkloadResult(tx, c, succeeded, this.deps.proxy))) return 'applied';
      const end = DEPLOYMENT_END[result.status];
      if (!end || !c.deploymentId) return 'applied';
      const d = await tx.selectFrom('deployments').selectAll().where('id', '=', c.deploymentId).forUpdate().executeTakeFirst();
      if (!d || !canMove(d.status, end)) return 'applied';
      await tx.updateTable('deployments').set({ status: end, reason, finishedAt: at }).where('id', '=', d.id).execute();
      const owner = ownerOfDeployment(d);
      const appStatus = end === 'cancelled' && d.status === 'running' ? await applicationStatusAfterCancel(tx, owner, d.id) : applicationStatusFor(end);
      if (appStatus) await setWorkloadStatus(tx, owner, appStatus);
      return 'applied';
    });
    // A removal may have queued proxy configurations: no need to wait for the relay's poll.
    if (applied === 'applied') this.deps.proxy?.notify();
    return applied;
  }

  /**
   * Commands whose deadline passed while no agent finished them (their server was offline,
   * or never came back): each ends as if its agent had answered EXPIRED, so a deployment
   * accepted by the API always ends. An agent that receives one later finds it expired too.
   */
  async expireOverdue(): Promise<number> {
    const overdue = await this.deps.db
      .selectFrom('commands')
      .select(['id', 'serverId'])
      .where('status', 'in', ['pending', 'published'])
      .where('deadline', '<', this.deps.clock())
      .orderBy('position')
      .execute();
    for (const c of overdue) {
      await this.applyCommandResult(c.serverId, {
        commandId: c.id,
        status: CommandStatus.COMMAND_STATUS_EXPIRED,
        reason: `the deadline passed before server ${c.serverId} ran the command`,
        finishedAt: undefined,
      });
    }
    return overdue.length;
  }
}
