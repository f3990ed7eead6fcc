/**
 * Runs one journaled command when the scheduler lets it: checks its deadline, journals the
 * start, calls its handler, journals and reports the result.
 *
 * - Not started and past its deadline: EXPIRED, without running.
 * - Started by an earlier agent process that stopped before it finished (journaled
 *   `started`, no result): run again. Handlers are idempotent (a deploy writes the same
 *   spec and finds its tasks running), so this is the safe choice, and it ends the command
 *   on its own instead of leaving a deployment `running`. Past its deadline by then: FAILED,
 *   with that reason.
 * - The agent stopping (its signal aborts) abandons the run: no result, the journal keeps it
 *   `started`, and the next start runs it again.
 * - A cancel (CancelWorkload, through RunningCommands) aborts only this run's own signal,
 *   with a CommandCancelled reason: the handler stops as on an agent stop, and the command
 *   ends CANCELLED with that reason; the handler's `ended` closes its deployment and undoes
 *   what the run began. The cancel is journaled before the abort: a run cut short by the
 *   agent's end is not run again at the next start but ended CANCELLED the same way. A handler that finished before it noticed the cancel keeps its
 *   outcome (the cancel came too late).
 * - A waiting command removed from the queue (CleanQueue) ends CANCELLED without running
 *   (`endWithoutRun`), so neither a restart nor a redelivery runs it.
 */
import { CommandStatus, commandKindToJSON, timestampFromDate, timestampToDate, type Command, type CommandKind } from '@skiff/proto';
import type { Logger } from 'pino';
import type { Reports } from './reports.js';
import { AbandonedError } from '../abort/abandoned.js';
import { cancelledBy, type CommandHandler, type CommandOutcome } from './handler.js';
import type { CommandJournal, JournalEntry } from './journal.js';
import { RunningCommands, type RunHandle } from './running-commands.js';

export type HandlerRegistry = ReadonlyMap<CommandKind, CommandHandler>;

export function handlerRegistry(handlers: CommandHandler[]): HandlerRegistry {
  return new Map(handlers.map((h) => [h.kind, h]));
}

export interface RunnerDeps {
  journal: CommandJournal;
  reports: Reports;
  handlers: HandlerRegistry;
  log: Logger;
  /** Aborted when the agent stops. */
  signal: AbortSignal;
  /** Where runs are registered so they can be cancelled; a private one when absent. */
  running?: RunningCommands;
  now?: () => Date;
}

export async function runCommand(id: string, deps: RunnerDeps): Promise<void> {
  const entry = deps.journal.get(id);
  if (!entry || entry.state === 'finished' || !entry.command) return;
  const run = (deps.running ?? new RunningCommands()).begin(entry.command, deps.signal);
  try {
    await runRegistered(entry, run, deps);
  } finally {
    run.release();
  }
}

async function runRegistered(entry: JournalEntry, run: RunHandle, deps: RunnerDeps): Promise<void> {
  const now = deps.now ?? (() => new Date());
  const { id } = entry;
  const command = run.command;
  const log = deps.log.child({ commandId: id, kind: commandKindToJSON(command.kind), workloadKey: command.workloadKey });
  const handler = deps.handlers.get(command.kind);
  if (!handler) {
    await finish(entry, { status: CommandStatus.COMMAND_STATUS_REJECTED, reason: `this agent does not handle ${commandKindToJSON(command.kind)} commands` }, deps, log, now);
    return;
  }

  let outcome: CommandOutcome;
  const cancelledEarly = cancelledBy(run.signal)?.message ?? entry.cancelReason;
  if (cancelledEarly) {
    // Cancelled between the scheduler's start and here, or while an earlier agent process
    // ran it (journaled `cancel`, no result): the handler is not called (again).
    outcome = { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: cancelledEarly };
    await closeWithoutRun(handler, command, outcome, log);
    await finish(entry, outcome, deps, log, now);
    return;
  }

  const deadline = command.deadline ? timestampToDate(command.deadline) : null;
  const resumed = entry.state === 'started';
  if (deadline && now().getTime() >= deadline.getTime()) {
    const outcome: CommandOutcome = resumed
      ? { status: CommandStatus.COMMAND_STATUS_FAILED, reason: `the deadline (${deadline.toISOString()}) passed while the agent was stopped during the run` }
      : { status: CommandStatus.COMMAND_STATUS_EXPIRED, reason: `the deadline (${deadline.toISOString()}) passed before the command could start` };
    await closeWithoutRun(handler, command, outcome, log);
    await finish(entry, outcome, deps, log, now);
    return;
  }

  await deps.journal.start(id);
  log.info({ resumed }, 'command started');
  try {
    outcome = await handler.run({ command, signal: run.signal, deadline, resumed, log, setPhase: (phase) => run.setPhase(phase) });
    if (cancelledBy(run.signal)) log.info('a cancel came after the command had finished; its outcome stands');
  } catch (err) {
    const cancel = cancelledBy(run.signal);
    if (cancel) {
      log.info({ phase: run.phase ?? undefined }, 'command cancelled');
      outcome = { status: CommandStatus.COMMAND_STATUS_CANCELLED, reason: cancel.message };
    } else if (err instanceof AbandonedError || run.signal.aborted) {
      log.info('command abandoned as the agent stops; it runs again at the next start');
      return;
    } else {
      log.error({ err }, 'command handler failed');
      outcome = { status: CommandStatus.COMMAND_STATUS_FAILED, reason: `the agent failed: ${(err as Error).message}` };
    }
    await closeWithoutRun(handler, command, outcome, log);
  }
  await finish(entry, outcome, deps, log, now);
}

/**
 * Ends a journaled command that will not run (removed from the queue, or cancelled while it
 * waited) with `outcome`: the handler closes its deployment (`ended`; a command not journaled
 * `started` has nothing to undo), then the result is journaled and reported. False when the
 * command is unknown or already finished.
 */
export async function endWithoutRun(id: string, outcome: CommandOutcome, deps: Omit<RunnerDeps, 'signal' | 'running'>): Promise<boolean> {
  const now = deps.now ?? (() => new Date());
  const entry = deps.journal.get(id);
  if (!entry || entry.state === 'finished') return false;
  const log = deps.log.child({ commandId: id, kind: commandKindToJSON(entry.kind), workloadKey: entry.workloadKey });
  const handler = entry.command ? deps.handlers.get(entry.command.kind) : undefined;
  if (handler && entry.command) await closeWithoutRun(handler, entry.command, outcome, log);
  await finish(entry, outcome, deps, log, now);
  return true;
}

/** Sends the stored events and result of a finished command again, unchanged. */
export function reReport(entry: JournalEntry, reports: Reports): void {
  for (const event of entry.events) reports.reportEvent(event);
  if (entry.result) reports.reportResult(entry.result);
}

async function closeWithoutRun(handler: CommandHandler, command: Command, outcome: CommandOutcome, log: Logger): Promise<void> {
  try {
    await handler.ended?.(command, outcome);
  } catch (err) {
    log.error({ err }, 'could not report how the command ended');
  }
}

async function finish(
  entry: JournalEntry,
  outcome: CommandOutcome,
  deps: Pick<RunnerDeps, 'journal' | 'reports'>,
  log: Logger,
  now: () => Date,
): Promise<void> {
  const result = { commandId: entry.id, status: outcome.status, reason: outcome.reason, finishedAt: timestampFromDate(now()), verification: outcome.verification, publishedHostPorts: outcome.publishedHostPorts };
  await deps.journal.finish(entry.id, result);
  deps.reports.reportResult(result);
  const level = outcome.status === CommandStatus.COMMAND_STATUS_SUCCEEDED ? 'info' : 'warn';
  log[level]({ status: CommandStatus[outcome.status], reason: outcome.reason || undefined }, 'command finished');
}
