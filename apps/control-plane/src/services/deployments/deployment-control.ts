import type { Db } from '@skiff/db';
import { CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON } from '@skiff/domain';
import { type CommandScope, deploymentsOfCommands, endUnrunCommand, unfinishedCommands, workReachedAgent } from '../../agents/outbound/command-records.js';
import { type AgentControl, AgentUnreachable, serverLabel } from '../../agents/outbound/control-client.js';
import { type CommandStream, NO_COMMAND_STREAM, withdrawUnreceived } from '../../agents/outbound/command-withdrawal.js';
import { commandKindOf, workloadKey } from '../../agents/outbound/kinds/index.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError } from '../../errors.js';
import { applicationStatusAfterCancel, canMove } from './deployment-status.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import { DEFAULT_KEEP_DEPLOYMENTS, pruneDeployments } from './deployment-retention.js';
import { DEPLOYED_KINDS, type DeployedKind, ownerOfDeployment, setDeployedStatus } from './workloads.js';

export interface CancelResult {
  deploymentIds: string[];
}

/**
 * `cancelDeployment`, `killBuild` and `cleanQueues` of applications and compose stacks (one
 * instance per kind; ARCHITECTURE.md "Commands" 5, REFERENCE.md "Deploy queue"). A
 * workload's jobs are its unfinished commands, in order; the first is the one that runs (or
 * runs next).
 *
 * - A command still in the outbox (`pending`: never published) is ended here, in the
 *   transaction that holds its row, so the relay (which holds the row while it publishes)
 *   either published it before, or never will.
 * - Anything the agent holds is cancelled by the agent, through a control request (not
 *   queued; agents/outbound/control-client.ts). A cancelled running command ends through the agent's
 *   reports (CANCELLED event and result), so the record says what the agent really did; the
 *   commands an agent removed from its queue are ended here as well, at once (the agent
 *   journaled them as cancelled before it answered, so they never run).
 * - An agent that does not answer (offline): a published command it never received (still
 *   in the command stream, never delivered to its consumer) is withdrawn from the stream and
 *   ended here (agents/outbound/command-withdrawal.ts says why it cannot run after that);
 *   one it may hold stays, and the answer says the agent did not answer.
 * - Permissions: those of the deploy operation (a caller who may see the workload).
 */
export class DeploymentControl {
  private readonly label: string;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
    private readonly agents: AgentControl,
    private readonly kind: DeployedKind = 'application',
    private readonly stream: CommandStream = NO_COMMAND_STREAM,
  ) {
    this.label = DEPLOYED_KINDS[kind].label;
  }

  private get db() {
    return this.deps.db;
  }

  /** Stops the workload's current job, whatever it does (build, pull, rollout, a stop…). */
  cancelDeployment(p: Principal, id: string): Promise<CancelResult> {
    return this.cancel(p, id, false);
  }

  /** Stops the workload's current deployment only while it builds. */
  killBuild(p: Principal, id: string): Promise<CancelResult> {
    return this.cancel(p, id, true);
  }

  /** Removes every job of the workload that does not run yet. */
  async cleanQueues(p: Principal, id: string): Promise<CancelResult> {
    const { row: app } = await this.access.find(p, this.kind, id);
    const key = workloadKey(this.kind, app.id);
    const queued = await this.unfinished(key);
    if (queued.length === 0) throw nothing(`Nothing waits in the queue of ${this.label} ${app.appName}`);

    // Not sent yet: ended here (the relay cannot send them any more).
    const here = await this.endCommands(
      queued.filter((c) => c.status === 'pending').map((c) => ({ id: c.id, workloadKey: key, serverId: c.serverId })),
      REMOVED_REASON,
      'pending',
    );
    // What the agent holds (re-read: the relay may have published some meanwhile).
    const held = (await this.unfinished(key)).filter((c) => c.status === 'published');
    let there: string[] = [];
    if (held.length > 0) {
      const serverId = held[0].serverId;
      let reply;
      // The ids let the agent refuse those still on their way to it (published, not taken in yet).
      const commandIds = held.filter((c) => c.serverId === serverId).map((c) => c.id);
      try {
        reply = await this.agents.request(serverId, { request: { $case: 'cleanQueue', value: { workloadKey: key, commandIds } } });
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        // Offline: what it never received is withdrawn and ended here.
        const scope = { workloadKey: key, serverId };
        const settled = err instanceof AgentUnreachable ? await this.endCommands(commandIds.map((id) => ({ id, ...scope })), REMOVED_REASON, 'unreceived') : { commandIds: [], deploymentIds: [] };
        const removed = here.commandIds.length + settled.commandIds.length;
        if (removed === 0) throw err;
        if (settled.commandIds.length < commandIds.length) {
          throw new DomainError(
            'BAD_REQUEST',
            `${err.message}. ${removed} job(s) of ${this.label} ${app.appName} that had not reached it were removed; those it holds stay queued`,
          );
        }
        reply = { commandIds: [], error: '' };
        there = settled.deploymentIds;
      }
      if (reply.commandIds.length > 0) {
        // The agent's own CANCELLED reports may have ended some already: answer them all.
        // Only this workload's commands on this server: an agent's answer ends nothing else.
        const scope = { workloadKey: key, serverId };
        await this.endCommands(reply.commandIds.map((id) => ({ id, ...scope })), REMOVED_REASON, 'held');
        there = await this.deploymentsOf(reply.commandIds, scope);
      }
      if (reply.error && here.commandIds.length === 0 && reply.commandIds.length === 0) {
        throw nothing(`Nothing waits in the queue of ${this.label} ${app.appName}: the agent of ${serverLabel(serverId)} says ${reply.error}`);
      }
    } else if (here.commandIds.length === 0) {
      throw nothing(`Nothing waits in the queue of ${this.label} ${app.appName}`);
    }
    // In queue order, whichever side ended them.
    const place = new Map(queued.map((c, i) => [c.deploymentId, i]));
    const ended = [...new Set([...here.deploymentIds, ...there])];
    return { deploymentIds: ended.sort((a, b) => (place.get(a) ?? Infinity) - (place.get(b) ?? Infinity)) };
  }

  private async cancel(p: Principal, id: string, buildOnly: boolean): Promise<CancelResult> {
    const { row: app } = await this.access.find(p, this.kind, id);
    const key = workloadKey(this.kind, app.id);
    const [head] = await this.unfinished(key);
    if (!head) throw nothing(`Nothing to cancel: no job of ${this.label} ${app.appName} is queued or running`);
    // Only a deploy (a build, a compose pull or build, then the rollout) is stopped.
    if (buildOnly && !commandKindOf(head)?.deploys) {
      throw nothing(`No build of ${this.label} ${app.appName} runs: its current job is not a deployment`);
    }
    const reason = buildOnly ? KILL_BUILD_REASON : CANCEL_REASON;
    if (head.status === 'pending') {
      const ended = await this.endCommands([{ id: head.id, workloadKey: key, serverId: head.serverId }], reason, 'pending');
      if (ended.commandIds.length > 0) return { deploymentIds: ended.deploymentIds };
      // Published in the meantime: the agent has it now.
    }
    // Naming the head: had it ended just before the request arrives, the agent refuses
    // rather than cancel what runs next (and one it has not taken in yet never runs).
    let reply;
    try {
      reply = await this.agents.request(head.serverId, {
        request: { $case: 'cancelWorkload', value: { workloadKey: key, deploymentId: head.deploymentId ?? '', buildOnly, commandId: head.id } },
      });
    } catch (err) {
      if (!(err instanceof AgentUnreachable)) throw err;
      // Offline: a head it never received is withdrawn and ended here; one it may hold stays.
      const ended = await this.endCommands([{ id: head.id, workloadKey: key, serverId: head.serverId }], reason, 'unreceived');
      if (ended.commandIds.length > 0) return { deploymentIds: ended.deploymentIds };
      throw err;
    }
    if (reply.error) {
      throw nothing(`Nothing was cancelled for ${this.label} ${app.appName}: the agent of ${serverLabel(head.serverId)} says ${reply.error}`);
    }
    return { deploymentIds: await this.deploymentsOf(reply.commandIds, { workloadKey: key, serverId: head.serverId }) };
  }

  /** The workload's commands without a result, in queue order. */
  private unfinished(key: string) {
    return unfinishedCommands(this.db, key);
  }

  /** The deployments of the commands an agent answered, among those of `scope` only. */
  private deploymentsOf(commandIds: string[], scope: CommandScope): Promise<string[]> {
    return deploymentsOfCommands(this.db, commandIds, scope);
  }

  /**
   * Ends commands that will never run as the agent would report a CANCELLED result: the
   * command failed with the reason, its deployment cancelled. `pending`: only if still
   * unpublished (the row lock orders this against the relay); `held`: the agent dropped them;
   * `unreceived`: published, withdrawn from the stream before its agent received it.
   * Each command is ended only if it belongs to the workload and server given with its id
   * (ids from an agent's answer are not trusted to name only its own workload's commands).
   */
  private async endCommands(commands: Array<{ id: string } & CommandScope>, reason: string, which: 'pending' | 'held' | 'unreceived') {
    const commandIds: string[] = [];
    const deploymentIds: string[] = [];
    for (const { id, ...scope } of commands) {
      await this.db.transaction().execute(async (tx) => {
        const at = this.deps.clock();
        const c =
          which === 'unreceived' ? await withdrawUnreceived(tx, this.stream, id, scope, reason, at) : await endUnrunCommand(tx, id, scope, which, reason, at);
        if (!c) return;
        commandIds.push(id);
        if (!c.deploymentId) return;
        if (await cancelDeploymentRow(tx, c.deploymentId, reason, at, this.deps.keepDeployments ?? DEFAULT_KEEP_DEPLOYMENTS)) deploymentIds.push(c.deploymentId);
      });
    }
    return { commandIds, deploymentIds };
  }
}

/**
 * Inside the transaction that deletes a workload (its row locked, so no command of it is
 * queued meanwhile): when no command of it ever reached its agent, ends those still
 * unfinished that the agent never received (pending ones; published ones withdrawn from the
 * stream), their deployments cancelled. True when all were: nothing of the workload ever
 * reached its agent, so it has no Docker object and its record may go at once. False (and
 * what it ended stays ended) when one may be in the agent's hands, or without NATS.
 */
export async function settleNeverReceived(tx: Db, deps: ServiceDeps, stream: CommandStream, key: string): Promise<boolean> {
  if (!stream.available || (await workReachedAgent(tx, key))) return false;
  const at = deps.clock();
  for (const c of await unfinishedCommands(tx, key)) {
    const scope = { workloadKey: key, serverId: c.serverId };
    const ended =
      c.status === 'pending'
        ? await endUnrunCommand(tx, c.id, scope, 'pending', REMOVED_REASON, at)
        : await withdrawUnreceived(tx, stream, c.id, scope, REMOVED_REASON, at);
    if (!ended) return false;
    if (ended.deploymentId) await cancelDeploymentRow(tx, ended.deploymentId, REMOVED_REASON, at, deps.keepDeployments ?? DEFAULT_KEEP_DEPLOYMENTS);
  }
  return true;
}

/** Moves a deployment to cancelled (when it may still move), restoring its workload's status. */
export async function cancelDeploymentRow(tx: Db, deploymentId: string, reason: string, at: Date, keep: number): Promise<boolean> {
  const d = await tx.selectFrom('deployments').select(['id', 'status', 'applicationId', 'composeId', 'previewDeploymentId']).where('id', '=', deploymentId).forUpdate().executeTakeFirst();
  if (!d || !canMove(d.status, 'cancelled')) return false;
  await tx.updateTable('deployments').set({ status: 'cancelled', reason, finishedAt: at }).where('id', '=', d.id).execute();
  if (d.status === 'running') {
    await setDeployedStatus(tx, d, await applicationStatusAfterCancel(tx, ownerOfDeployment(d), d.id));
  }
  await pruneDeployments(tx, ownerOfDeployment(d), keep, d.previewDeploymentId);
  return true;
}

const nothing = (message: string) => new DomainError('BAD_REQUEST', message);
