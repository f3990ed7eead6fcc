/**
 * Runs one build program (git, the docker CLI, an external builder) with an argument array,
 * never a shell, in its own process group, and streams its output as lines.
 *
 * The deadline and the signal both kill the whole group (SIGKILL), so a builder's own
 * children (git's remote helpers, ssh) die with it. Where util-linux's `setpriv` exists, the
 * program also gets SIGKILL when the agent dies (`--pdeathsig`), so a killed agent leaves no
 * build running without its deadline (and the next start sweeps any that still do, see
 * workdir.ts). With `cgroupProcs`, the program runs in that cgroup from its first instruction:
 * a fixed `/bin/sh` script writes its own pid to each `cgroup.procs` file and then execs the
 * program (writing the child's pid from here after spawn would race it: the program could
 * allocate or fork into the old cgroup before the write lands). The program and its
 * arguments reach that script only as positional parameters it execs with `"$@"`, never as
 * text it parses; names a shell reads from its environment cannot be build arguments
 * (refuseBuildArgName). Output lines are split on `\n`; progress
 * that redraws itself with `\r` is reduced to its last state per line.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

export interface ChildRun {
  /** The program: an absolute path or a name looked up on PATH. */
  file: string;
  args: readonly string[];
  /** The child's whole environment (nothing of the agent's own is inherited). */
  env: Record<string, string>;
  cwd?: string;
  /** Kills the child when aborted. */
  signal: AbortSignal;
  /** Kills the child at this instant (epoch ms). */
  deadline: number;
  /** Each output line (stdout and stderr), without its line end. */
  onLine: (line: string) => void;
  /** `cgroup.procs` files of the cgroup(s) the program runs in (see the module's comment). */
  cgroupProcs?: readonly string[];
}

export interface ChildResult {
  /** The exit code, or null when a signal ended it. */
  code: number | null;
  /** The signal that ended it (e.g. SIGKILL from the kernel's OOM killer), or null. */
  signalCode?: NodeJS.Signals | null;
  /** Killed because the deadline passed. */
  timedOut: boolean;
  /** Killed because the signal aborted. */
  aborted: boolean;
  /** The program could not be started (e.g. not installed): the error's message. */
  startError: string | null;
}

export function runChild(run: ChildRun): Promise<ChildResult> {
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let startError: string | null = null;
    if (run.signal.aborted) {
      resolve({ code: null, timedOut, aborted: true, startError });
      return;
    }
    const program = resolveProgram(run.file, run.env.PATH ?? '');
    if (!program) {
      resolve({ code: null, timedOut, aborted, startError: `spawn ${run.file} ENOENT` });
      return;
    }
    const argv = run.cgroupProcs && run.cgroupProcs.length > 0 ? ['/bin/sh', '-c', ENTER_CGROUP, 'skiff-enter-cgroup', ...run.cgroupProcs, '--', program, ...run.args] : [program, ...run.args];
    const [file, args] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', ...argv]] : [argv[0]!, argv.slice(1)];
    const child = spawn(file, args, {
      cwd: run.cwd,
      env: run.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = () => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    run.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      Math.max(0, run.deadline - Date.now()),
    );
    const out = lineSplitter(run.onLine);
    const err = lineSplitter(run.onLine);
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (e) => {
      startError = e.message;
    });
    child.once('close', (code, signalCode) => {
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
      out.end();
      err.end();
      // A group member that outlived the leader (a builder's daemonised child) dies too.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is gone already.
        }
      }
      resolve({ code, signalCode, timedOut, aborted, startError });
    });
  });
}

/** Moves itself into each cgroup named before `--`, then becomes the program after it. */
const ENTER_CGROUP = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 126; shift; done; shift; exec "$@"';

/** Longest line kept; the rest of a longer line is dropped (a build can print megabytes on one line). */
const MAX_LINE = 4_000;

/** Splits a byte stream into lines; `\r` redraws keep only their last state. */
export function lineSplitter(onLine: (line: string) => void) {
  let pending = '';
  const decoder = new StringDecoder('utf8');
  const emit = (raw: string) => {
    const segments = raw.split('\r').filter((s) => s.trim() !== '');
    const line = segments.length > 0 ? segments[segments.length - 1]! : '';
    if (line.trim() !== '') onLine(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} …` : line);
  };
  return {
    push(chunk: Buffer | string) {
      pending += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        emit(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        nl = pending.indexOf('\n');
      }
      if (pending.length > 64 * MAX_LINE) pending = pending.slice(-MAX_LINE);
    },
    end() {
      pending += decoder.end();
      if (pending !== '') emit(pending);
      pending = '';
    },
  };
}

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(executable) ?? null;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The program's path: as given when absolute, else the first executable in an absolute
 * directory of PATH (relative entries are skipped: they would depend on the working
 * directory); null when none.
 */
export function resolveProgram(file: string, path: string): string | null {
  if (isAbsolute(file)) return executable(file) ? file : null;
  if (file.includes('/')) return null;
  for (const dir of path.split(delimiter)) if (isAbsolute(dir) && executable(join(dir, file))) return join(dir, file);
  return null;
}
