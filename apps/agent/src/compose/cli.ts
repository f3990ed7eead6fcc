/**
 * Running the Compose program and the docker CLI for a stack: argument arrays only, each
 * program in its own process group (build/child-process.ts), killed by the command's abort
 * signal (cancel, killBuild, agent stop) and by its deadline.
 *
 * - Compose: `<program> --ansi never -p <project> -f <converted file> --env-file <.env> <args>`,
 *   run in the compose file's directory. v1 (`docker-compose` 1.29) and v2 (`docker compose`)
 *   take the same global options and the same subcommands used here (up, stop, start, restart,
 *   down); their outputs differ, so the state of the containers is read from the engine
 *   (`docker inspect`), never parsed from Compose.
 * - Swarm stacks: `docker stack deploy -c <file> <options> <stack>` and `docker stack rm`.
 *   `docker stack deploy` does not read `.env`: the stack's variables are given to it as its
 *   environment (the agent's own PATH, HOME and DOCKER_HOST win over variables of the same
 *   name), and it interpolates the file with them.
 */
import type { ComposeProgram, ComposeProgramChoice } from './program.js';
import { BuildLog } from '../build/build-log.js';
import { runChild } from '../build/child-process.js';
import { runLoggedProgram } from '../build/logged-program.js';
import { baseEnv } from '../build/settings.js';
import { BuildError } from '../build/errors.js';
import { AbandonedError } from '../abort/abandoned.js';

export interface ComposeSettings {
  /** The agent's data directory: stacks live in `compose/` under it, `known_hosts` beside. */
  dataDir: string;
  /** The docker CLI (dockerCliOf). */
  dockerCli: string;
  /** The engine's unix socket (DOCKER_HOST of every program). */
  dockerSocket: string;
  /** The Compose program found at start (program.ts). */
  program: ComposeProgramChoice;
  /** Longest deploy (fetch, conversion, the Compose run, the wait) when the command's deadline allows more. */
  timeoutMs: number;
  /** PATH and HOME of the programs (HOME holds the docker CLI's registry logins); default the agent's. */
  path?: string;
  home?: string;
}

/** A program run that failed, for a reason the user can act on (its last output lines). */
export class ComposeRunError extends BuildError {
  override name = 'ComposeRunError';
}

export interface Files {
  project: string;
  /** Absolute paths of the converted file and the `.env` file. */
  file: string;
  envFile: string;
  /** Where Compose runs: the compose file's directory. */
  cwd: string;
}

export interface Run {
  signal: AbortSignal;
  /** Epoch ms. */
  deadline: number;
  /** Where the program's output goes (a deployment's log, or the agent's). */
  log: (...lines: string[]) => Promise<void>;
  /** Values to hide from the output (the stack's variables). */
  secrets?: readonly string[];
}

export const programEnv = (settings: ComposeSettings): Record<string, string> => baseEnv(settings);

/** The Compose program, or a ComposeRunError naming what is missing. */
export function composeProgramOf(settings: ComposeSettings): ComposeProgram {
  if (!settings.program.program) throw new ComposeRunError(settings.program.missing);
  return settings.program.program;
}

/** `<program> … <args>` for the stack; throws ComposeRunError (its reason) or AbandonedError. */
export async function runCompose(settings: ComposeSettings, files: Files, args: readonly string[], run: Run): Promise<void> {
  const program = composeProgramOf(settings);
  const subcommand = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '--profile') ?? '';
  await runLogged({
    name: `${program.name} ${subcommand}`.trim(),
    file: program.file,
    args: [...program.prefix, '--ansi', 'never', '-p', files.project, '-f', files.file, '--env-file', files.envFile, ...args],
    env: programEnv(settings),
    cwd: files.cwd,
    run,
  });
}

/** `docker stack deploy -c <file> <options> <stack>`; `args` start with `deploy` (checkComposeCommand). */
export async function runStackDeploy(
  settings: ComposeSettings,
  files: Files,
  args: readonly string[],
  variables: ReadonlyMap<string, string>,
  run: Run,
): Promise<void> {
  const [subcommand, ...options] = args;
  await runLogged({
    name: 'docker stack deploy',
    file: settings.dockerCli,
    args: ['stack', subcommand ?? 'deploy', '-c', files.file, ...options, files.project],
    env: { ...Object.fromEntries(variables), ...programEnv(settings) },
    cwd: files.cwd,
    run,
  });
}

/** Runs the docker CLI and answers its exit code and output lines (stdout and stderr). */
export async function docker(
  settings: ComposeSettings,
  args: readonly string[],
  run: Pick<Run, 'signal' | 'deadline'>,
): Promise<{ code: number | null; lines: string[] }> {
  const lines: string[] = [];
  const result = await runChild({ file: settings.dockerCli, args, env: programEnv(settings), signal: run.signal, deadline: run.deadline, onLine: (l) => lines.push(l) });
  if (result.aborted || run.signal.aborted) throw new AbandonedError();
  if (result.startError) throw new ComposeRunError(`the docker CLI could not be started: ${result.startError}`);
  if (result.timedOut) throw new ComposeRunError(`docker ${args[0] ?? ''} did not answer in time`);
  return { code: result.code, lines };
}

async function runLogged(options: { name: string; file: string; args: string[]; env: Record<string, string>; cwd: string; run: Run }): Promise<void> {
  const { run } = options;
  try {
    await runLoggedProgram({
      name: options.name,
      file: options.file,
      args: options.args,
      env: options.env,
      cwd: options.cwd,
      signal: run.signal,
      deadline: run.deadline,
      log: new BuildLog(run.log, { secrets: run.secrets ?? [] }),
      tailLines: 20,
      timeoutMessage: `${options.name} did not finish before the deadline`,
      failure: composeFailure,
    });
  } catch (err) {
    if (err instanceof BuildError && !(err instanceof ComposeRunError)) throw new ComposeRunError(err.message);
    throw err;
  }
}

/**
 * The telling line of a failed run: the last of Compose's `ERROR:` lines (v1) or `Error …`
 * lines (v2, the docker CLI) that says more than "Encountered errors…", else the last line.
 */
function composeFailure(tail: readonly string[]): string | null {
  const lines = tail.map((l) => l.trim()).filter((l) => l !== '');
  const errors = lines.filter((l) => /^(ERROR|Error|error)\b/.test(l));
  const telling = errors.filter((l) => !/Encountered errors while bringing up the project/.test(l));
  const line = telling[telling.length - 1] ?? errors[errors.length - 1] ?? lines[lines.length - 1];
  return line === undefined ? null : line.replace(/^ERROR:\s*/, '').replace(/\s+/g, ' ');
}
