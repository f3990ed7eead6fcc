/**
 * What the agent does with a control request (proto ControlRequest; ARCHITECTURE.md
 * "Commands" 5: a cancel is not queued and aborts only that workload's running command).
 *
 * - CancelWorkload: the cancel is journaled, then the workload's running command is aborted
 *   with a CommandCancelled reason (pipeline/runner.ts ends it CANCELLED and its handler undoes what
 *   it began; an agent that stops first ends it so at its next start). With `command_id`
 *   (or `deployment_id`), only when the running command is that one (that deployment's):
 *   the caller's current command may have ended just before, and the next one is not
 *   cancelled in its place. With `build_only` (killBuild), only while its handler says it
 *   is in its `build` phase. The reply lists the cancelled command at once; the command
 *   ends shortly after.
 * - CancelWorkload when nothing of the workload runs (not with build_only): a `command_id`
 *   this agent has not taken in yet (still on its way through the stream) is journaled as
 *   finished CANCELLED and reported, so it never runs when it arrives; otherwise the
 *   workload's first waiting command (waiting for a deploy slot), if it is the one named,
 *   ends CANCELLED without running (its handler closes its deployment, nothing to undo).
 * - CleanQueue: the workload's waiting commands are taken out of the scheduler and each
 *   ends CANCELLED without running: its handler closes its deployment ("removed from the
 *   queue"), the result is journaled (so neither a restart nor a redelivery runs it) and
 *   reported. The listed command ids this agent has not taken in yet (still on their way
 *   through the stream) are journaled as finished CANCELLED right away: when they arrive,
 *   the intake finds them finished and only re-reports that. The reply comes once all of
 *   them are journaled.
 *
 * - Proxy (a ProxyRequest): answered by the ProxyControl (proxy-control.ts); refused when
 *   this agent runs no proxy.
 * - AgentRestart (settings.updateServer): an agent on another version answers `restarting`
 *   and, once the reply is out, begins its orderly stop with the restart status; with
 *   `check_only` or the same version it only answers its version (and `restarting` while it
 *   is stopping for one).
 * - HostCleanup: answered by the HostCleanupControl (host-cleanup.ts); refused when this
 *   agent was started without one.
 * - Container (a ContainerRequest): container-control.ts; Logs (a LogsRequest): log-streams.ts.
 * - Cluster (a ClusterRequest): answered by the ClusterControl (cluster-control.ts).
 *
 * Nothing to do is not a failure of the agent: the reply carries `error` saying why.
 */
import { CANCEL_REASON, KILL_BUILD_REASON, REMOVED_REASON } from '@skiff/domain';
import { CommandKind, CommandStatus, timestampFromDate, type AgentRestart, type CancelWorkload, type CleanQueue, type Command, type ControlReply, type ControlRequest } from '@skiff/proto';
import type { Logger } from 'pino';
import type { Reports } from '../pipeline/reports.js';
import { JournalError, type CommandJournal } from '../pipeline/journal.js';
import { endWithoutRun, type HandlerRegistry } from '../pipeline/runner.js';
import type { RunningCommands } from '../pipeline/running-commands.js';
import type { CommandScheduler } from '../pipeline/scheduler.js';
import type { HostCleanupControl } from './host-cleanup.js';
import type { ContainerControl } from './container-control.js';
import type { LogStreams } from './log-streams.js';
import type { ClusterControl } from './cluster-control.js';
import type { ProxyControl } from './proxy-control.js';

export interface CommandControlDeps {
  scheduler: Pick<CommandScheduler, 'firstWaiting' | 'removeWaiting' | 'forget'>;
  running: RunningCommands;
  journal: CommandJournal;
  reports: Reports;
  handlers: HandlerRegistry;
  log: Logger;
  now?: () => Date;
  /** Answers proxy requests; absent: they are refused. */
  proxy?: Pick<ProxyControl, 'handle'>;
  /** This agent's version and how it restarts (main.ts); absent: restarts are refused. */
  restart?: AgentRestarter;
  /** Answers host cleanups; absent: they are refused. */
  hostCleanup?: Pick<HostCleanupControl, 'handle'>;
  /** Answers container requests and starts log streams; absent: they are refused. */
  containers?: Pick<ContainerControl, 'handle'>;
  logs?: Pick<LogStreams, 'start'>;
  /** Answers cluster requests; absent: they are refused. */
  cluster?: Pick<ClusterControl, 'handle'>;
}

export interface AgentRestarter {
  version: string;
  /** Stops the agent in order and exits with RESTART_EXIT_CODE. */
  begin: () => void;
  /** Puts the offered program (AgentRestart.bundle_sha256) in place of its own; absent: restarts on the installed one. */
  install?: (bundle: { sha256: string; size: number }) => Promise<void>;
}

/** Lets the reply of an AgentRestart leave before the stop unsubscribes. */
const RESTART_DELAY_MS = 200;

export class CommandControl {
  private restarting = false;

  constructor(private readonly deps: CommandControlDeps) {}

  async handle(request: ControlRequest): Promise<ControlReply> {
    switch (request.request?.$case) {
      case 'cancelWorkload':
        return this.cancel(request.request.value);
      case 'cleanQueue':
        return this.cleanQueue(request.request.value);
      case 'proxy':
        return this.deps.proxy ? this.deps.proxy.handle(request.request.value) : refused('this agent runs no reverse proxy');
      case 'agentRestart':
        return this.agentRestart(request.request.value);
      case 'hostCleanup':
        return this.deps.hostCleanup ? this.deps.hostCleanup.handle(request.request.value) : refused('this agent cannot clean its host');
      case 'container':
        return this.deps.containers ? this.deps.containers.handle(request.request.value) : refused('this agent answers no container requests');
      case 'logs':
        return this.deps.logs ? this.deps.logs.start(request.request.value) : refused('this agent streams no logs');
      case 'cluster':
        return this.deps.cluster ? this.deps.cluster.handle(request.request.value) : refused('this agent answers no cluster requests');
      default:
        return refused('the control request asks for nothing this agent knows');
    }
  }

  private async agentRestart(request: AgentRestart): Promise<ControlReply> {
    const own = this.deps.restart;
    if (!own) return refused('this agent cannot be restarted remotely');
    const answer = (restarting: boolean): ControlReply => ({ commandIds: [], error: '', agentRestart: { version: own.version, restarting } });
    if (this.restarting) return answer(true);
    if (request.checkOnly || request.version === own.version) return answer(false);
    this.restarting = true;
    if (request.bundleSha256 !== '' && own.install) {
      try {
        await own.install({ sha256: request.bundleSha256, size: Number(request.bundleSize) });
      } catch (err) {
        this.restarting = false;
        this.deps.log.warn({ err: (err as Error).message }, 'could not install the agent program offered for an update');
        return refused(`could not install the agent program ${request.bundleSha256}: ${(err as Error).message}`);
      }
    }
    this.deps.log.info({ from: own.version, to: request.version }, 'restarting for an update (settings.updateServer)');
    setTimeout(() => own.begin(), RESTART_DELAY_MS).unref();
    return answer(true);
  }

  async cancel(request: CancelWorkload): Promise<ControlReply> {
    const key = request.workloadKey;
    if (key === '') return refused('workload_key is empty');
    const run = this.deps.running.ofWorkload(key);
    if (!run) return request.buildOnly ? refused(`nothing runs for ${key}`) : this.cancelNotRunning(request);
    const other = otherThanAsked(request, run.id, run.command);
    if (other) return refused(`the command running for ${key} is not ${other}`);
    if (request.buildOnly && run.phase !== 'build') {
      return refused(run.phase === 'rollout' ? `the deployment of ${key} is past its build: its rollout runs` : `no build runs for ${key}`);
    }
    if (run.signal.aborted) return refused(`the command running for ${key} is already stopping`);
    const reason = request.buildOnly ? KILL_BUILD_REASON : CANCEL_REASON;
    try {
      // Journaled first: if the agent ends before the run does, the next start ends it CANCELLED instead of running it again.
      await this.deps.journal.recordCancel(run.id, reason);
    } catch (err) {
      if (err instanceof JournalError) return refused(`the command running for ${key} has just finished`);
      throw err;
    }
    if (!this.deps.running.cancel(run.id, reason)) return refused(`the command running for ${key} is already stopping`);
    this.deps.log.info({ commandId: run.id, workloadKey: key, buildOnly: request.buildOnly, phase: run.phase }, 'cancelling the running command');
    return { commandIds: [run.id], error: '' };
  }

  /**
   * Nothing of the workload runs. The command the caller named, when this agent has not
   * taken it in yet, is journaled as finished CANCELLED (it never runs when it arrives);
   * otherwise the workload's first waiting command (the one the user sees as current) is
   * taken out of the queue and ends CANCELLED, if it is the one the caller named.
   */
  private async cancelNotRunning(request: CancelWorkload): Promise<ControlReply> {
    const key = request.workloadKey;
    const named = request.commandId;
    if (named !== '' && !this.deps.journal.get(named)) {
      const unseen = await this.refuseUnseen(key, [named], CANCEL_REASON);
      if (unseen.length > 0) {
        this.deps.log.info({ commandId: named, workloadKey: key }, 'cancelled a command not taken in yet');
        return { commandIds: unseen, error: '' };
      }
      // It arrived in the meantime (journaled now, so this does not come back here).
      return this.cancel(request);
    }
    const first = this.deps.scheduler.firstWaiting(key);
    if (!first) {
      if (named !== '' && this.deps.journal.get(named)?.state === 'finished') return refused(`command ${named} of ${key} has already finished`);
      return refused(`nothing runs for ${key}`);
    }
    const other = otherThanAsked(request, first.id, this.deps.journal.get(first.id)?.command ?? null);
    if (other) return refused(`the command waiting first for ${key} is not ${other}`);
    // Synchronously after the look: still the first one.
    const [taken] = this.deps.scheduler.removeWaiting(key, 1);
    try {
      const ended = await endWithoutRun(taken.id, { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: CANCEL_REASON }, this.deps);
      if (!ended) return refused(`the command waiting for ${key} has just finished`);
    } finally {
      this.deps.scheduler.forget(taken.id);
    }
    this.deps.log.info({ commandId: taken.id, workloadKey: key }, 'cancelled the command waiting for a deploy slot');
    return { commandIds: [taken.id], error: '' };
  }

  async cleanQueue(request: CleanQueue): Promise<ControlReply> {
    const key = request.workloadKey;
    if (key === '') return refused('workload_key is empty');
    const outcome = { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: REMOVED_REASON };
    const ended: string[] = [];
    const removed = this.deps.scheduler.removeWaiting(key);
    try {
      ended.push(...(await this.refuseUnseen(key, request.commandIds, REMOVED_REASON)));
      // One that arrived while the others were journaled waits in the queue now: drop it too.
      removed.push(...this.deps.scheduler.removeWaiting(key));
      for (const { id } of removed) {
        if (await endWithoutRun(id, outcome, this.deps)) ended.push(id);
      }
    } catch (err) {
      // The journal could not be written: what was not ended stays journaled as accepted and
      // runs at the next start. Say so rather than claim it was dropped.
      this.deps.log.error({ err, workloadKey: key }, 'could not end the commands removed from the queue');
      return { commandIds: ended, error: `the agent could not record the removal: ${(err as Error).message}` };
    } finally {
      for (const { id } of removed) this.deps.scheduler.forget(id);
    }
    if (ended.length === 0) return refused(`no command of ${key} waits in the queue`);
    this.deps.log.info({ workloadKey: key, commandIds: ended }, 'removed waiting commands from the queue');
    return { commandIds: ended, error: '' };
  }

  /** Journals the listed commands not taken in yet as finished CANCELLED (and reports them); answers their ids. */
  private async refuseUnseen(workloadKey: string, ids: readonly string[], reason: string): Promise<string[]> {
    const refused: string[] = [];
    for (const id of new Set(ids)) {
      if (id === '' || this.deps.journal.get(id)) continue;
      const result = {
        commandId: id,
        status: CommandStatus.COMMAND_STATUS_CANCELLED,
        reason,
        finishedAt: timestampFromDate((this.deps.now ?? (() => new Date()))()),
      };
      try {
        await this.deps.journal.acceptFinished({ id, workloadKey, kind: CommandKind.COMMAND_KIND_UNSPECIFIED }, result);
      } catch (err) {
        // It arrived in the meantime: once journaled it waits in the queue (removed by the caller) or runs.
        if (!(err instanceof JournalError)) throw err;
        await this.deps.journal.settled(id);
        continue;
      }
      this.deps.reports.reportResult(result);
      refused.push(id);
    }
    return refused;
  }
}

function refused(error: string): ControlReply {
  return { commandIds: [], error };
}

function deploymentIdOf(command: Command | null): string | null {
  return command?.payload?.$case === 'deployApplication' ? command.payload.value.deploymentId : null;
}

/** What the request names (`command …` / `deployment …`) that the command `id` is not; null when it is that one. */
function otherThanAsked(request: CancelWorkload, id: string, command: Command | null): string | null {
  if (request.commandId !== '' && id !== request.commandId) return `command ${request.commandId}`;
  if (request.deploymentId !== '' && deploymentIdOf(command) !== request.deploymentId) return `deployment ${request.deploymentId}`;
  return null;
}
