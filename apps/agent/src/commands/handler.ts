/**
 * What a command handler is: one per command kind (CONVENTIONS.md, `commands/<command>.ts`).
 * The runner journals, checks deadlines and reports the result; a handler only acts and
 * says how it ended. Handlers must be idempotent: after an agent restart a command that
 * had started may run again.
 */
import type { Command, CommandKind, CommandStatus } from '@skiff/proto';
import type { Logger } from 'pino';

export interface CommandContext {
  command: Command;
  /** Aborted when the agent stops: end quickly, without reporting an outcome. */
  signal: AbortSignal;
  /** The command's deadline, or null when it has none. */
  deadline: Date | null;
  /** True when an earlier agent process had started it and stopped before it finished. */
  resumed: boolean;
  log: Logger;
}

export interface CommandOutcome {
  status: CommandStatus;
  /** Why it did not succeed; empty when it did. */
  reason: string;
}

export interface CommandHandler {
  readonly kind: CommandKind;
  /** The Command.payload case this kind carries. */
  readonly payloadCase: NonNullable<Command['payload']>['$case'];
  /** Whether it takes one of the server's deploy slots (SKIFF_AGENT_MAX_CONCURRENT_DEPLOYS). */
  readonly takesSlot: boolean;
  /** Why the command cannot be run at all (it is then REJECTED), or null. */
  validate(command: Command): string | null;
  run(context: CommandContext): Promise<CommandOutcome>;
  /**
   * Called when the command ends without running (its deadline passed), so the handler
   * can close what it reports on (a deployment's status). Optional.
   */
  ended?(command: Command, outcome: CommandOutcome): Promise<void>;
}

/** Thrown (or rejected with) when a run stops because the agent stops. */
export class AbandonedError extends Error {
  override name = 'AbandonedError';
  constructor() {
    super('the agent is stopping');
  }
}

/** Waits `ms`, or rejects with AbandonedError as soon as the signal aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new AbandonedError());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbandonedError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
