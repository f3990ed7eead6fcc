/**
 * The commands whose handlers run right now (at most one per workload: the scheduler's FIFO),
 * each with its own AbortController, linked to the agent's stop signal, and the phase its
 * handler says it is in. The runner registers every run here; the control responder
 * (control/) cancels a workload's running command through it (ARCHITECTURE.md "Commands" 5).
 */
import type { Command } from '@skiff/proto';
import { CommandCancelled, type CommandPhase } from './handler.js';

export interface RunningCommand {
  readonly id: string;
  readonly workloadKey: string;
  readonly command: Command;
  /** Aborts when the agent stops (its reason) or when the command is cancelled (a CommandCancelled). */
  readonly signal: AbortSignal;
  /** The phase the handler said it entered, or null before it said any. */
  readonly phase: CommandPhase | null;
}

/** A registered run, as the runner holds it. */
export interface RunHandle extends RunningCommand {
  setPhase(phase: CommandPhase): void;
  /** Unregisters the run (and unlinks it from the agent's signal); call it when the run ends. */
  release(): void;
}

export class RunningCommands {
  private readonly runs = new Map<string, { handle: RunHandle; controller: AbortController }>();

  /** Registers a command that begins to run; its signal also aborts when `stop` does. */
  begin(command: Command, stop: AbortSignal): RunHandle {
    const id = command.commandId;
    const controller = new AbortController();
    const onStop = () => controller.abort(stop.reason);
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
    let phase: CommandPhase | null = null;
    const handle: RunHandle = {
      id,
      workloadKey: command.workloadKey,
      command,
      signal: controller.signal,
      get phase() {
        return phase;
      },
      setPhase(next) {
        phase = next;
      },
      release: () => {
        stop.removeEventListener('abort', onStop);
        if (this.runs.get(id)?.handle === handle) this.runs.delete(id);
      },
    };
    this.runs.set(id, { handle, controller });
    return handle;
  }

  /** The running command of a workload, if one runs. */
  ofWorkload(workloadKey: string): RunningCommand | undefined {
    for (const { handle } of this.runs.values()) if (handle.workloadKey === workloadKey) return handle;
    return undefined;
  }

  get(id: string): RunningCommand | undefined {
    return this.runs.get(id)?.handle;
  }

  /**
   * Aborts a running command with a CommandCancelled carrying `reason`; false when it does
   * not run (any more) or its signal had already aborted (a cancel, or the agent stopping).
   */
  cancel(id: string, reason: string): boolean {
    const run = this.runs.get(id);
    if (!run || run.controller.signal.aborted) return false;
    run.controller.abort(new CommandCancelled(reason));
    return true;
  }
}
