/**
 * Runs one build program with its output going to the deployment's log (secrets hidden) and
 * turns how it ended into the build's errors: AbandonedError when the signal aborted,
 * BuildError when it could not start, ran past its deadline or failed (with the reason
 * `failure` finds in the last lines of its output).
 */
import { AbandonedError } from '../abort/abandoned.js';
import type { BuildLog } from './build-log.js';
import { runChild, type ChildRun } from './child-process.js';
import { BuildError } from './errors.js';

export interface LoggedProgram extends Omit<ChildRun, 'onLine'> {
  /** How the log and errors name the program, e.g. `git clone`. */
  name: string;
  log: BuildLog;
  /** Output lines kept for the failure reason. */
  tailLines: number;
  timeoutMessage: string;
  /** The program's own reason from the last lines (already scrubbed of secrets); null: the last line. */
  failure?: (tail: readonly string[]) => string | null;
}

export async function runLoggedProgram(run: LoggedProgram): Promise<void> {
  const tail: string[] = [];
  const result = await runChild({
    ...run,
    onLine: (line) => {
      run.log.line(line);
      tail.push(run.log.scrub(line));
      if (tail.length > run.tailLines) tail.shift();
    },
  });
  await run.log.close();
  if (result.aborted || run.signal.aborted) throw new AbandonedError();
  if (result.startError) throw new BuildError(`${run.name} could not be started: ${result.startError}`);
  if (result.timedOut) throw new BuildError(run.timeoutMessage);
  if (result.code !== 0) {
    const reason = run.failure ? run.failure(tail) : (tail[tail.length - 1]?.trim() ?? null);
    const error = new BuildError(`${run.name} failed: ${reason ?? (result.signalCode ? `killed by ${result.signalCode}` : `exit code ${result.code}`)}`);
    error.exit = { code: result.code, signal: result.signalCode ?? null };
    throw error;
  }
}
