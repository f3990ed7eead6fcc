/**
 * `docker build` through the docker CLI with BuildKit (DOCKER_BUILDKIT=1), the only way the
 * engine takes build secrets:
 *
 *   docker build --progress=plain -f <file> [--target <stage>] [--build-arg KEY…]
 *     [--secret id=KEY,src=<file>…] --label skiff.…=… -t <image> <context>
 *
 * - Build argument values go to the CLI through its environment (`--build-arg KEY` takes
 *   the value of KEY there), never its argument list; names the CLI itself reads from its
 *   environment (PATH, HOME, DOCKER_*, BUILDKIT_*) cannot be build arguments.
 * - Build secrets are files (0600) in the build's private directory, removed with it; the
 *   Containerfile reads them with `RUN --mount=type=secret,id=KEY`, so they never become
 *   an image layer, and any output line showing one is hidden.
 * - The image carries the workload's `skiff.*` labels.
 * - Killing the CLI (deadline, cancel, agent stop) ends the BuildKit session, which stops
 *   the build on the engine.
 * - The build runs under the server's build cap (capped-build.ts): the CLI in the builders'
 *   cgroup, the steps in BuildKit's, both under the cap.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildLog } from './build-log.js';
import { BuildError } from './errors.js';
import { baseEnv, type BuildSettings } from './settings.js';
import { runLoggedProgram } from './logged-program.js';
import { runCapped } from './capped-build.js';

export interface DockerBuildInput {
  /** The Containerfile (absolute). */
  file: string;
  /** The build context (absolute). */
  context: string;
  /** `--target`; empty: the last stage. */
  target: string;
  buildArgs: Record<string, string>;
  /** Secret id → the file holding it. */
  secretFiles: Record<string, string>;
  labels: Record<string, string>;
  image: string;
}

const ARG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SECRET_ID = /^[A-Za-z0-9_.-]{1,128}$/;
const TARGET = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Why a build argument name cannot be used, or null. */
export function refuseBuildArgName(name: string): string | null {
  if (!ARG_NAME.test(name)) return `build argument "${name}" is not a valid name (letters, digits, _)`;
  if (PROCESS_ENV_NAMES.has(name) || PROCESS_ENV_PREFIXES.test(name)) {
    return `build argument ${name} cannot be used: the builder program itself (its loader, C library or runtime) reads that name from its environment`;
  }
  return null;
}

/**
 * Names the builder programs (the docker CLI, setpriv, /bin/sh, external builders), their dynamic
 * loader, C library or Go runtime read from their own environment, where build argument
 * values go: one of them as a build argument could load code from the repository into a
 * process of the agent (LD_PRELOAD) or change where it talks to (DOCKER_HOST).
 */
const PROCESS_ENV_NAMES = new Set([
  // The shell that moves a builder into the build cap's cgroup (child-process.ts), when /bin/sh is bash.
  'SHELLOPTS', 'BASHOPTS', 'PS1', 'PS2', 'PS3', 'PS4', 'PROMPT_COMMAND', 'CDPATH', 'GLOBIGNORE', 'EXECIGNORE', 'POSIXLY_CORRECT',
  'PATH', 'HOME', 'LANG', 'LANGUAGE', 'TMPDIR', 'TZ', 'TZDIR', 'SHELL', 'ENV', 'BASH_ENV', 'IFS', 'LOCPATH', 'NLSPATH',
  'RES_OPTIONS', 'HOSTALIASES', 'LOCALDOMAIN', 'NODE_OPTIONS', 'OPENSSL_CONF', 'OPENSSL_MODULES', 'GODEBUG', 'GOGC',
  'GOMAXPROCS', 'GOMEMLIMIT', 'GOTRACEBACK', 'GORACE', 'GOEXPERIMENT', 'GOCOVERDIR', 'GOFIPS140',
]);
const PROCESS_ENV_PREFIXES = /^(BASH|LD_|GLIBC_|GCONV_|MALLOC_|LC_|DOCKER_|BUILDKIT_|BUILDX_|SSL_|XDG_)/;

/** The docker CLI's arguments for a build. Pure; values of build args are not in it. */
export function dockerBuildArgs(input: DockerBuildInput): string[] {
  const args = ['build', '--progress=plain', '-f', input.file];
  if (input.target !== '') args.push('--target', input.target);
  for (const name of Object.keys(input.buildArgs).sort()) args.push('--build-arg', name);
  for (const id of Object.keys(input.secretFiles).sort()) args.push('--secret', `id=${id},src=${input.secretFiles[id]}`);
  for (const [key, value] of Object.entries(input.labels).sort(([a], [b]) => a.localeCompare(b))) args.push('--label', `${key}=${value}`);
  args.push('-t', input.image, '--', input.context);
  return args;
}

export interface DockerBuildRun {
  settings: BuildSettings;
  file: string;
  context: string;
  target: string;
  buildArgs: Record<string, string>;
  buildSecrets: Record<string, string>;
  labels: Record<string, string>;
  image: string;
  /** Where the secret files go (0700, removed by the caller). */
  privateDir: string;
  signal: AbortSignal;
  deadline: number;
  log: (...lines: string[]) => Promise<void>;
}

/** Runs the build; throws BuildError with the builder's reason, or AbandonedError on abort. */
export async function runDockerBuild(run: DockerBuildRun): Promise<void> {
  for (const name of Object.keys(run.buildArgs)) {
    const refusal = refuseBuildArgName(name);
    if (refusal) throw new BuildError(refusal);
  }
  if (run.target !== '' && !TARGET.test(run.target)) throw new BuildError(`build stage "${run.target}" is not a valid stage name`);
  const secretFiles: Record<string, string> = {};
  let n = 0;
  for (const [id, value] of Object.entries(run.buildSecrets)) {
    if (!SECRET_ID.test(id)) throw new BuildError(`build secret "${id}" is not a valid id (letters, digits, _ . -)`);
    const file = join(run.privateDir, `secret-${n++}`);
    await writeFile(file, value, { mode: 0o600 });
    secretFiles[id] = file;
  }

  const args = dockerBuildArgs({ ...run, secretFiles });
  const env = { ...baseEnv(run.settings), ...run.buildArgs, DOCKER_BUILDKIT: '1' };
  await runCapped(run.settings.cap, run.log, (cgroupProcs) => runBuildProgram(run, args, env, cgroupProcs));
}

function runBuildProgram(run: DockerBuildRun, args: string[], env: Record<string, string>, cgroupProcs: string[] | undefined): Promise<void> {
  return runLoggedProgram({
    cgroupProcs,
    name: 'the build',
    file: run.settings.dockerCli,
    args,
    env,
    signal: run.signal,
    deadline: run.deadline,
    log: new BuildLog(run.log, { secrets: Object.values(run.buildSecrets) }),
    tailLines: 30,
    timeoutMessage: 'the build did not finish before its timeout',
    failure: buildFailure,
  });
}

/** The builder's own reason, from the end of BuildKit's plain output. */
export function buildFailure(tail: readonly string[]): string | null {
  const lines = tail.map((l) => l.trim()).filter((l) => l !== '');
  const last = [...lines].reverse();
  const found =
    last.find((l) => /^(error|ERROR):/.test(l)) ??
    last.find((l) => /failed to solve|executor failed|did not complete successfully/.test(l)) ??
    last.find((l) => /^#\d+ ERROR/.test(l));
  if (!found) return lines[lines.length - 1] ?? null;
  return found.replace(/^(error|ERROR):\s*/, '').replace(/^#\d+ ERROR:\s*/, '');
}
