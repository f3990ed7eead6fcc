/**
 * The build types that call an external builder program, when the server has it
 * (REFERENCE.md names them):
 *
 * | build type             | program    | how                                                        |
 * |------------------------|------------|------------------------------------------------------------|
 * | pack_one               | `nixpacks` | `nixpacks build <dir> --name <image> [--env KEY…]`        |
 * | pack_two               | `railpack` | `railpack build <dir> --name <image> [--env KEY…]`        |
 * | legacy_buildpacks      | `pack`     | `pack build <image> --path <dir> --builder heroku/builder:<version, default 24>` |
 * | cloudnative_buildpacks | `pack`     | `pack build <image> --path <dir> --builder paketobuildpacks/builder-jammy-base` |
 *
 * Build arguments reach them as environment variables by name (`--env KEY`, the value in
 * the program's environment, never its arguments). They have no build secrets: secrets
 * given are not passed (the log says so), since these builders may bake their environment
 * into the image. pack_two's `builder_version` is not selectable (railpack builds with the
 * installed version; the log names the version asked for). A missing program fails the
 * build with `<program> is not installed on this server (needed by build type <type>)`.
 *
 * Under the server's build cap (capped-build.ts): the program and every process it starts run
 * in the builders' cgroup under the cap; nixpacks' `docker build` runs with BuildKit, whose
 * steps the cap holds too. What the cap cannot reach: the containers `pack` starts through
 * the engine's API (it has no cgroup-parent or limit option), and railpack's steps, which run
 * in whichever BuildKit daemon it is given.
 */
import { BuildType } from '@skiff/proto';
import { BuildLog } from './build-log.js';
import { resolveProgram } from './child-process.js';
import { BuildError } from './errors.js';
import { refuseBuildArgName } from './docker-build.js';
import { baseEnv, type BuildSettings } from './settings.js';
import { runLoggedProgram } from './logged-program.js';
import { runCapped } from './capped-build.js';

export const BUILD_TYPE_NAMES: Partial<Record<BuildType, string>> = {
  [BuildType.BUILD_TYPE_PACK_ONE]: 'pack_one',
  [BuildType.BUILD_TYPE_PACK_TWO]: 'pack_two',
  [BuildType.BUILD_TYPE_LEGACY_BUILDPACKS]: 'legacy_buildpacks',
  [BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS]: 'cloudnative_buildpacks',
};

const VERSION = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface ExternalBuild {
  type: BuildType;
  /** The directory to build (absolute). */
  dir: string;
  image: string;
  buildArgs: Record<string, string>;
  hasSecrets: boolean;
  builderVersion: string;
}

/** The program and its arguments for a build type. Pure. */
export function externalBuilderCommand(build: ExternalBuild): { program: string; args: string[] } {
  const envArgs = Object.keys(build.buildArgs).sort().flatMap((k) => ['--env', k]);
  switch (build.type) {
    case BuildType.BUILD_TYPE_PACK_ONE:
      return { program: 'nixpacks', args: ['build', build.dir, '--name', build.image, ...envArgs] };
    case BuildType.BUILD_TYPE_PACK_TWO:
      return { program: 'railpack', args: ['build', build.dir, '--name', build.image, ...envArgs] };
    case BuildType.BUILD_TYPE_LEGACY_BUILDPACKS:
      return {
        program: 'pack',
        args: ['build', build.image, '--path', build.dir, '--builder', `heroku/builder:${build.builderVersion || '24'}`, ...envArgs],
      };
    case BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS:
      return { program: 'pack', args: ['build', build.image, '--path', build.dir, '--builder', 'paketobuildpacks/builder-jammy-base', ...envArgs] };
    default:
      throw new BuildError('this build type has no external builder');
  }
}

export interface ExternalBuildRun extends ExternalBuild {
  settings: BuildSettings;
  signal: AbortSignal;
  deadline: number;
  log: (...lines: string[]) => Promise<void>;
}

export async function runExternalBuild(run: ExternalBuildRun): Promise<void> {
  const typeName = BUILD_TYPE_NAMES[run.type] ?? 'unknown';
  const { program, args } = externalBuilderCommand(run);
  const base = baseEnv(run.settings);
  const found = resolveProgram(program, base.PATH!);
  if (!found) throw new BuildError(`${program} is not installed on this server (needed by build type ${typeName})`);
  for (const name of Object.keys(run.buildArgs)) {
    const refusal = refuseBuildArgName(name);
    if (refusal) throw new BuildError(refusal);
  }
  // nixpacks drives `docker build`: with BuildKit its steps run in the engine's BuildKit cgroup, under the cap.
  const env = { ...base, ...run.buildArgs, DOCKER_BUILDKIT: '1' };
  if (run.builderVersion !== '' && !VERSION.test(run.builderVersion)) {
    throw new BuildError(`builder version "${run.builderVersion}" is not a valid version`);
  }
  if (run.hasSecrets) await run.log(`Build secrets are not passed to ${program} (it has no build secrets); use a containerfile build for them`);
  if (run.type === BuildType.BUILD_TYPE_PACK_TWO && run.builderVersion !== '') {
    await run.log(`railpack ${run.builderVersion} was asked for; the installed railpack builds`);
  }
  await run.log(`Building with ${program} (${typeName})`);
  await runCapped(run.settings.cap, run.log, (cgroupProcs) => runLoggedProgram({
    cgroupProcs,
    name: program,
    file: found,
    args,
    env,
    signal: run.signal,
    deadline: run.deadline,
    log: new BuildLog(run.log),
    tailLines: 10,
    timeoutMessage: 'the build did not finish before its timeout',
  }));
}
