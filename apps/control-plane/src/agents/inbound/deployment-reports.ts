import type { Db, DeploymentStatus as StoredStatus } from '@skiff/db';
import {
  CommandKind,
  type CommandResult,
  CommandStatus,
  type DeploymentEvent,
  DeploymentStatus,
  commandKindToJSON,
  commandStatusToJSON,
  timestampToDate,
} from '@skiff/proto';
import { appendLog, applicationStatusAfterCancel, applicationStatusFor, canMove, isFinished } from '../../services/deployments/deployment-status.js';
import type { ProxyConfig } from '../../services/domains/proxy-config.js';
import { ownerOfDeployment, setDeployedStatus } from '../../services/deployments/workloads.js';
import { commandOf, lockCommand, overdueCommands, recordCommandEnd } from '../outbound/command-records.js';
import { DEFAULT_KEEP_DEPLOYMENTS, pruneAfterEnd, pruneDeployments } from '../../services/deployments/deployment-retention.js';
import { commandKindOf } from '../outbound/kinds/index.js';
import { parseWorkloadKey } from '../outbound/workload-key.js';
import { recordDeploymentEnd } from '../../services/events/deployment-events.js';

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

const DEFAULT_REASON: Partial<Record<CommandStatus, string>> = {
  [CommandStatus.COMMAND_STATUS_FAILED]: 'the agent reported the command failed',
  [CommandStatus.COMMAND_STATUS_EXPIRED]: "the command's deadline passed before the agent could run it",
  [CommandStatus.COMMAND_STATUS_REJECTED]: 'the agent rejected the command',
  [CommandStatus.COMMAND_STATUS_CANCELLED]: 'cancelled',
};

export type Applied = 'applied' | 'duplicate';

const REMOVE_WORKLOAD = commandKindToJSON(CommandKind.COMMAND_KIND_REMOVE_WORKLOAD);

/**
 * What agents report, applied to deployments, commands and workloads: deployment events move
 * deployment records here; a command's result is recorded on its row and handed to its kind
 * (agents/outbound/kinds, looked up in the registry), which says what it does to the records.
 * Every report names its server (from the agent's credential, never from the message): a
 * record of another server is NOT_FOUND to it.
 */
export class DeploymentReports {
  /**
   * `proxy`: to reconfigure the servers whose routes go with a removed workload; `archives`:
   * to delete the files of a removed application's archives (their rows go by cascade).
   */
  constructor(
    private readonly deps: {
      db: Db;
      clock: () => Date;
      proxy?: ProxyConfig;
      keepDeployments?: number;
      /** `SKIFF_MAX_COMPOSE_PORTS`: a DeployCompose's reported ports are kept up to it. */
      maxComposePorts?: number;
      archives?: { removeFiles(): Promise<void> };
      /** Woken after a report recorded events (a deployment ended): delivery and event streams. */
      events?: { notify(): void };
    },
  ) {}

  private get keep() {
    return this.deps.keepDeployments ?? DEFAULT_KEEP_DEPLOYMENTS;
  }

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
    let ended = false;
    const applied = await this.deps.db.transaction().execute(async (tx): Promise<Applied> => {
      const d = await tx.selectFrom('deployments').selectAll().where('id', '=', event.deploymentId).forUpdate().executeTakeFirst();
      // A cache instance keeps no deployment records: the events of its deploys are set aside.
      if (!d && (await this.setsEventsAside(tx, serverId, event.commandId))) return 'applied';
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
      if (appStatus) await setDeployedStatus(tx, d, appStatus);
      if (next === 'done' || next === 'error') {
        await recordDeploymentEnd(tx, d, next, at, event.reason || null);
        ended = true;
      }
      if (next && isFinished(next)) await pruneDeployments(tx, owner, this.keep, d.previewDeploymentId);
      return 'applied';
    });
    if (ended) this.deps.events?.notify();
    return applied;
  }

  /** Whether the command is one of this server whose kind sets aside events naming no deployment record. */
  private async setsEventsAside(db: Db, serverId: string, commandId: string): Promise<boolean> {
    const c = await commandOf(db, commandId);
    return c !== undefined && c.serverId === serverId && commandKindOf(c)?.unrecordedEvents === 'set aside';
  }

  /**
   * How a command ended: the command is marked done or failed, with its reason, and its kind
   * applies the result to the records (a deploy ends its deployment unless the agent's events
   * did; a stop, start, reload or remove moves its workload: agents/outbound/kinds).
   */
  async applyCommandResult(serverId: string, result: CommandResult): Promise<Applied> {
    if (result.status === CommandStatus.COMMAND_STATUS_UNSPECIFIED || result.status === CommandStatus.UNRECOGNIZED) {
      throw new ReportRefused('INVALID_ARGUMENT', 'status is required');
    }
    const succeeded = result.status === CommandStatus.COMMAND_STATUS_SUCCEEDED;
    const at = result.finishedAt ? timestampToDate(result.finishedAt) : this.deps.clock();
    const reason = succeeded ? null : result.reason || DEFAULT_REASON[result.status] || commandStatusToJSON(result.status);
    const { applied, removedApplication } = await this.deps.db.transaction().execute(async (tx) => {
      const c = await lockCommand(tx, result.commandId);
      if (!c || c.serverId !== serverId) throw new ReportRefused('NOT_FOUND', `no command ${result.commandId} for this server`);
      if (c.status === 'done' || c.status === 'failed') return { applied: 'duplicate' as const, removedApplication: false };
      await recordCommandEnd(tx, c.id, { succeeded, at, reason });
      await commandKindOf(c)?.applyResult({ tx, command: c, status: result.status, reason, at, proxy: this.deps.proxy, verification: result.verification, publishedHostPorts: result.publishedHostPorts, maxHostPorts: this.deps.maxComposePorts });
      // A deploy's result may have ended its deployment (deployment-result.ts): the workload's old ones go.
      if (c.deploymentId) await pruneAfterEnd(tx, c.deploymentId, this.keep);
      return { applied: 'applied' as const, removedApplication: succeeded && c.kind === REMOVE_WORKLOAD && parseWorkloadKey(c.workloadKey)?.type === 'application' };
    });
    // A removal may have queued proxy configurations, a deploy's end an event: no need to wait for the polls.
    if (applied === 'applied') {
      this.deps.proxy?.notify();
      this.deps.events?.notify();
    }
    if (removedApplication) await this.deps.archives?.removeFiles();
    return applied;
  }

  /**
   * Commands whose deadline passed while no agent finished them (their server was offline,
   * or never came back): each ends as if its agent had answered EXPIRED, so a deployment
   * accepted by the API always ends. An agent that receives one later finds it expired too.
   */
  async expireOverdue(): Promise<number> {
    const overdue = await overdueCommands(this.deps.db, this.deps.clock());
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
