/**
 * The build step of DeployApplication: fetch the source into a fresh work directory, build
 * it as the recipe says, tag the result as the command's `image`, and remove the work
 * directory (also after a failure or an abort).
 *
 * Paths of the recipe are resolved inside the fetched source (paths.ts). The containerfile
 * defaults to `Dockerfile` (then `Containerfile`) in the build path; the context to the
 * build path. The image carries the workload's `skiff.*` labels (containerfile and static
 * builds).
 */
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { BuildType, type BuildRecipe, type BuildSource } from '@skiff/proto';
import { runDockerBuild } from './docker-build.js';
import { BuildError } from './errors.js';
import { BUILD_TYPE_NAMES, runExternalBuild } from './external-builders.js';
import { SourcePathError, resolveInside } from './paths.js';
import type { BuildSettings } from './settings.js';
import { fetchSource } from './source.js';
import { prepareStaticContext } from './static-site.js';
import { openWorkDir } from './workdir.js';

export interface ImageBuild {
  settings: BuildSettings;
  deploymentId: string;
  source: BuildSource;
  recipe: BuildRecipe;
  /** The tag the result gets. */
  image: string;
  /** `skiff.*` labels of the image. */
  labels: Record<string, string>;
  signal: AbortSignal;
  /** Everything must be done by then (epoch ms): the command's deadline or the build timeout. */
  deadline: number;
  log: (...lines: string[]) => Promise<void>;
}

/** Throws BuildError (the deployment's reason) or AbandonedError (abort). */
export async function buildImage(build: ImageBuild): Promise<void> {
  const work = await openWorkDir(build.settings.dataDir, build.deploymentId);
  try {
    await fetchSource(build.source, work.source, {
      signal: build.signal,
      deadline: build.deadline,
      log: build.log,
      deploymentId: build.deploymentId,
      dataDir: build.settings.dataDir,
      privateDir: work.private,
      artifacts: build.settings.artifacts,
    });
    await buildFetched(build, work.source, work.private);
  } catch (err) {
    if (err instanceof SourcePathError) throw new BuildError(err.message);
    throw err;
  } finally {
    await work.remove();
  }
}

async function buildFetched(build: ImageBuild, fetched: string, privateDir: string): Promise<void> {
  const { recipe } = build;
  const root = await realpath(fetched);
  const dir = await resolveInside(root, root, recipe.buildPath, { setting: 'build path', kind: 'directory' });
  const common = { settings: build.settings, signal: build.signal, deadline: build.deadline, log: build.log, image: build.image };
  switch (recipe.type) {
    case BuildType.BUILD_TYPE_CONTAINERFILE: {
      const file = await containerfileOf(root, dir, recipe.containerfile);
      const context = await resolveInside(root, dir, recipe.contextPath, { setting: 'context path', kind: 'directory' });
      await build.log(`Building image ${build.image} from ${relativeName(root, file)} (context ${relativeName(root, context)}${recipe.buildStage ? `, stage ${recipe.buildStage}` : ''})`);
      await runDockerBuild({
        ...common,
        file,
        context,
        target: recipe.buildStage,
        buildArgs: recipe.buildArgs,
        buildSecrets: recipe.buildSecrets,
        labels: build.labels,
        privateDir,
      });
      break;
    }
    case BuildType.BUILD_TYPE_STATIC: {
      const publish = await resolveInside(root, dir, recipe.publishDirectory, { setting: 'publish directory', kind: 'directory' });
      await build.log(`Building static site image ${build.image} from ${relativeName(root, publish)}${recipe.staticSpa ? ' (single-page application)' : ''}`);
      const context = join(privateDir, 'static-site');
      const file = await prepareStaticContext(publish, context, { spa: recipe.staticSpa });
      await runDockerBuild({ ...common, file, context, target: '', buildArgs: {}, buildSecrets: {}, labels: build.labels, privateDir });
      break;
    }
    case BuildType.BUILD_TYPE_PACK_ONE:
    case BuildType.BUILD_TYPE_PACK_TWO:
    case BuildType.BUILD_TYPE_LEGACY_BUILDPACKS:
    case BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS:
      await runExternalBuild({
        ...common,
        type: recipe.type,
        dir,
        buildArgs: recipe.buildArgs,
        hasSecrets: Object.keys(recipe.buildSecrets).length > 0,
        builderVersion: recipe.builderVersion,
      });
      break;
    default:
      throw new BuildError(`the command names no build type this agent knows (${BUILD_TYPE_NAMES[recipe.type] ?? recipe.type})`);
  }
  await build.log(`Built image ${build.image}`);
}

async function containerfileOf(root: string, dir: string, given: string): Promise<string> {
  if (given.trim() !== '') return resolveInside(root, dir, given, { setting: 'containerfile', kind: 'file' });
  try {
    return await resolveInside(root, dir, 'Dockerfile', { setting: 'containerfile', kind: 'file' });
  } catch (err) {
    if (!(err instanceof SourcePathError)) throw err;
    try {
      return await resolveInside(root, dir, 'Containerfile', { setting: 'containerfile', kind: 'file' });
    } catch {
      throw err;
    }
  }
}

/** A path of the source as the log shows it (`./app/Dockerfile`). */
function relativeName(root: string, path: string): string {
  return path === root ? '.' : `.${path.slice(root.length)}`;
}
