import type { Application } from '@skiff/db';
import { LEGACY_SPEC_REFUSAL, PLATFORM_NETWORK, type WorkloadSpecInput, wireServerId, workloadSpecToWire, trimChar } from '@skiff/domain';
import {
  type BuildRecipe,
  type BuildSource,
  BuildType,
  type Command,
  CommandKind,
  type DeployApplication,
  type FileMount,
  type RegistryAuth,
  WorkloadKind,
  type WorkloadRef,
  timestampFromDate,
} from '@skiff/proto';
import { endDeployment } from './deployment-result.js';
import { defineCommandKind, workloadKey } from './kind.js';

/** How long an agent has to finish a deploy before it ends as expired (ARCHITECTURE.md: every step has a deadline). */
export const DEPLOY_DEADLINE_MS = 15 * 60_000;
/** The same for a deploy that builds (fetch and build, then the rollout); the agent's own build timeout (30 min by default) ends a build sooner. */
export const BUILD_DEPLOY_DEADLINE_MS = 60 * 60_000;

const BUILD_TYPES: Record<string, BuildType> = {
  containerfile: BuildType.BUILD_TYPE_CONTAINERFILE,
  static: BuildType.BUILD_TYPE_STATIC,
  pack_one: BuildType.BUILD_TYPE_PACK_ONE,
  pack_two: BuildType.BUILD_TYPE_PACK_TWO,
  legacy_buildpacks: BuildType.BUILD_TYPE_LEGACY_BUILDPACKS,
  cloudnative_buildpacks: BuildType.BUILD_TYPE_CLOUDNATIVE_BUILDPACKS,
};

/**
 * The tag a build's result gets on the agent's engine: `<appName>:<deploymentId>`, the
 * repository part lower-cased with characters Docker refuses in a repository name turned
 * into `-` (appNames may have capitals, dots and underscores anywhere). One tag per
 * deployment, so a rollback finds the previous version's image still there.
 */
export function builtImageName(appName: string, deploymentId: string): string {
  const repository = trimChar(appName.toLowerCase().replace(/[^a-z0-9]+/g, '-'), '-') || 'app';
  const tag = deploymentId.replace(/[^A-Za-z0-9_.-]/g, '-').replace(/^[.-]+/, '').slice(0, 128) || 'build';
  return `${repository}:${tag}`;
}

/**
 * How the agent builds an application's source, from its build settings. Pure. Null
 * `buildType` is `containerfile`. The build path is the source type's (`customGitBuildPath`
 * for git, `dropBuildPath` for drop); every path is passed as written and resolved (and
 * checked to stay inside the source) by the agent. Build args and secrets are resolved
 * maps (their values are secrets).
 */
export function buildRecipe(
  app: Application,
  buildPath: string | null,
  resolved: { buildArgs: Map<string, string>; buildSecrets: Map<string, string> },
): BuildRecipe {
  const type = BUILD_TYPES[app.buildType ?? 'containerfile'] ?? BuildType.BUILD_TYPE_UNSPECIFIED;
  const version =
    type === BuildType.BUILD_TYPE_LEGACY_BUILDPACKS ? app.legacyVersion : type === BuildType.BUILD_TYPE_PACK_TWO ? app.packTwoVersion : null;
  return {
    type,
    buildPath: (buildPath ?? '').trim(),
    containerfile: (app.containerfile ?? '').trim(),
    contextPath: (app.containerContextPath ?? '').trim(),
    buildStage: (app.containerBuildStage ?? '').trim(),
    buildArgs: Object.fromEntries(resolved.buildArgs),
    buildSecrets: Object.fromEntries(resolved.buildSecrets),
    publishDirectory: (app.publishDirectory ?? '').trim(),
    staticSpa: app.isStaticSpa ?? false,
    builderVersion: (version ?? '').trim(),
  };
}

/**
 * The settings of an application's Swarm service, from its columns. `env` is left empty:
 * the resolved variables travel once, in DeployApplication.env (they are secrets).
 * `forceUpdate` grows with every deployment, so each deploy rolls the tasks out anew even
 * when nothing in the spec changed (a moved `:latest` tag, a redeploy).
 */
export function applicationWorkloadSpec(app: Application, forceUpdate: number): WorkloadSpecInput {
  return {
    appName: app.appName,
    kind: 'application',
    id: app.id,
    image: app.containerImage ?? '',
    env: [],
    command: app.command,
    args: app.args,
    replicas: app.replicas,
    memoryLimit: app.memoryLimit,
    memoryReservation: app.memoryReservation,
    cpuLimit: app.cpuLimit,
    cpuReservation: app.cpuReservation,
    platformNetwork: PLATFORM_NETWORK,
    forceUpdate,
    healthCheckCluster: app.healthCheckCluster as WorkloadSpecInput['healthCheckCluster'],
    restartPolicyCluster: app.restartPolicyCluster as WorkloadSpecInput['restartPolicyCluster'],
    placementCluster: app.placementCluster as WorkloadSpecInput['placementCluster'],
    updateConfigCluster: app.updateConfigCluster as WorkloadSpecInput['updateConfigCluster'],
    rollbackConfigCluster: app.rollbackConfigCluster as WorkloadSpecInput['rollbackConfigCluster'],
    modeCluster: app.modeCluster as WorkloadSpecInput['modeCluster'],
    labelsCluster: app.labelsCluster as WorkloadSpecInput['labelsCluster'],
    networkCluster: app.networkCluster as WorkloadSpecInput['networkCluster'],
    stopGracePeriodCluster: app.stopGracePeriodCluster as WorkloadSpecInput['stopGracePeriodCluster'],
    endpointSpecCluster: app.endpointSpecCluster as WorkloadSpecInput['endpointSpecCluster'],
    ulimitsCluster: app.ulimitsCluster as WorkloadSpecInput['ulimitsCluster'],
  };
}

export interface DeployCommandInput {
  commandId: string;
  deploymentId: string;
  app: Application;
  spec: WorkloadSpecInput;
  /** The resolved environment (values are secrets). */
  env: Map<string, string>;
  /** The login to the image's private registry (applicationRegistryAuth); the password is a secret. */
  registryAuth?: RegistryAuth;
  /** What to build, for git and drop sources (the spec's image is then the build's tag, builtImageName). */
  build?: { source: BuildSource; recipe: BuildRecipe };
  /** Built images of earlier deployments the agent keeps (rollback targets). */
  keepImages?: string[];
  /** The image must be on the server already (a rollback to a built image). */
  localImage?: boolean;
  /** The application's file mounts (contents are secrets), written by the agent. */
  files?: FileMount[];
  createdAt: Date;
  deadline: Date;
}

/** The deadline of a deploy: longer when the agent builds first. */
export const deployDeadlineMs = (builds: boolean) => (builds ? BUILD_DEPLOY_DEADLINE_MS : DEPLOY_DEADLINE_MS);

/** The DeployApplication command for one deployment of an application. */
export function deployApplicationCommand(input: DeployCommandInput): Command {
  const { app } = input;
  return {
    commandId: input.commandId,
    serverId: wireServerId(app.serverId),
    kind: CommandKind.COMMAND_KIND_DEPLOY_APPLICATION,
    workloadKey: workloadKey('application', app.id),
    deadline: timestampFromDate(input.deadline),
    createdAt: timestampFromDate(input.createdAt),
    payload: {
      $case: 'deployApplication',
      value: {
        ...deployPayload(input.deploymentId, { kind: WorkloadKind.WORKLOAD_KIND_APPLICATION, id: app.id, appName: app.appName }, input.spec, input.env),
        registryAuth: input.registryAuth,
        source: input.build?.source,
        build: input.build?.recipe,
        keepImages: input.keepImages ?? [],
        localImage: input.localImage ?? false,
        files: input.files ?? [],
      },
    },
  };
}

/**
 * The DeployApplication of one rollout of a Swarm service (an application's, or a cache
 * instance's): the image and the variables once each, the settings as the typed spec.
 */
export function deployPayload(deploymentId: string, workload: WorkloadRef, spec: WorkloadSpecInput, env: Map<string, string>): DeployApplication {
  return {
    deploymentId,
    workload,
    image: spec.image,
    env: Object.fromEntries(env),
    replicas: 0,
    forcePull: false,
    specJson: LEGACY_SPEC_REFUSAL,
    spec: workloadSpecToWire(spec),
    keepImages: [],
    localImage: false,
    files: [],
  };
}

/**
 * DeployApplication of an application (a cache instance's deploys: cache-deploy.ts): built
 * above; its deployment record follows the agent's events, and a result that is not success
 * ends it (deployment-result.ts).
 */
export const deployApplication = defineCommandKind({
  name: 'deploy application',
  kinds: [CommandKind.COMMAND_KIND_DEPLOY_APPLICATION],
  workloads: ['application'],
  deploys: true,
  build: deployApplicationCommand,
  applyResult: endDeployment,
});
