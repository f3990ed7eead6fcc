/**
 * What a command handler is: one per command kind (docs/architecture.md, "How to add a command kind").
 * The runner journals, checks deadlines and reports the result; a handler only acts and
 * says how it ended. Handlers must be idempotent: after an agent restart a command that
 * had started may run again.
 */
import { CommandStatus, type Command, type CommandKind, type DatabaseVerification, type PublishedHostPorts } from '@skiff/proto';
import type { Logger } from 'pino';

/** What a running command is doing, as its handler says (`setPhase`): a killBuild stops only a build. */
export type CommandPhase = 'build' | 'rollout';

export interface CommandContext {
  command: Command;
  /**
   * Aborted when the agent stops, or when the command is cancelled (its `reason` is then a
   * CommandCancelled): end quickly, without reporting an outcome (throw AbandonedError, or
   * let an abort error through). The runner tells the two apart.
   */
  signal: AbortSignal;
  /** The command's deadline, or null when it has none. */
  deadline: Date | null;
  /** True when an earlier agent process had started it and stopped before it finished. */
  resumed: boolean;
  log: Logger;
  /**
   * Says which phase the run has entered (`build` while fetching and building the source,
   * `rollout` from the service update on). A CancelWorkload with `build_only` cancels the
   * command only while it is in `build`. Absent in contexts built outside the runner.
   */
  setPhase?(phase: CommandPhase): void;
}

export interface CommandOutcome {
  status: CommandStatus;
  /** Why it did not succeed; empty when it did. */
  reason: string;
  /** What a VerifyDatabase found; reported in CommandResult.verification. */
  verification?: DatabaseVerification;
  /** The host ports a DeployCompose's file as deployed publishes; reported in CommandResult.published_host_ports. */
  publishedHostPorts?: PublishedHostPorts;
}

export const succeeded = (): CommandOutcome => ({ status: CommandStatus.COMMAND_STATUS_SUCCEEDED, reason: '' });
export const failed = (reason: string): CommandOutcome => ({ status: CommandStatus.COMMAND_STATUS_FAILED, reason });

export interface CommandHandler {
  readonly kind: CommandKind;
  /** The Command.payload case this kind carries. */
  readonly payloadCase: NonNullable<Command['payload']>['$case'];
  /** Whether it takes one of the server's deploy slots (SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS). */
  readonly takesSlot: boolean;
  /** Why the command cannot be run at all (it is then REJECTED), or null. */
  validate(command: Command): string | null | Promise<string | null>;
  run(context: CommandContext): Promise<CommandOutcome>;
  /**
   * Called when the command ends without `run` saying how, so the handler can close what it
   * reports on (a deployment's status): it never ran (its deadline passed; it was removed
   * from the queue: COMMAND_STATUS_CANCELLED), its run was cancelled (COMMAND_STATUS_CANCELLED:
   * undo what the run began), or its handler failed. Optional.
   */
  ended?(command: Command, outcome: CommandOutcome): Promise<void>;
}

/**
 * The abort reason of a cancelled command (CancelWorkload): the runner ends the command
 * CANCELLED with this message as its reason, instead of abandoning it as on an agent stop.
 */
export class CommandCancelled extends Error {
  override name = 'CommandCancelled';
}

/** Whether the signal was aborted by a cancel (not by the agent stopping). */
export function cancelledBy(signal: AbortSignal): CommandCancelled | null {
  return signal.aborted && signal.reason instanceof CommandCancelled ? signal.reason : null;
}
