import type { Application, CacheInstance, ComposeStack, DatabaseService, Environment, Member, Project } from '@skiff/db';
import type { ServiceKind } from './service-records.js';

/**
 * Every column of a row type, named: what a statement compiled once selects where `select *`
 * would do (compiled-once.ts). The type refuses a list that misses a column of the row type (a
 * column added to the schema is added here too) or names one it does not have.
 */
export const everyColumn =
  <T>() =>
  <const L extends readonly (keyof T & string)[]>(list: L & (Exclude<keyof T, L[number]> extends never ? unknown : { missing: Exclude<keyof T, L[number]> })) =>
    list;

export const PROJECT_COLUMNS = everyColumn<Project>()(['id', 'organizationId', 'name', 'description', 'env', 'createdAt']);
export const ENVIRONMENT_COLUMNS = everyColumn<Environment>()(['id', 'projectId', 'name', 'description', 'env', 'createdAt']);
export const MEMBER_COLUMNS = everyColumn<Member>()(['id', 'organizationId', 'userId', 'role', 'permissions', 'platformAdmin', 'createdAt']);

const SERVICE = ['id', 'environmentId', 'name', 'appName', 'description', 'serverId', 'env', 'applicationStatus', 'createdAt'] as const;
const RESOURCES = ['memoryReservation', 'memoryLimit', 'cpuReservation', 'cpuLimit'] as const;
const CLUSTER = [
  'healthCheckCluster', 'restartPolicyCluster', 'placementCluster', 'updateConfigCluster', 'rollbackConfigCluster', 'modeCluster',
  'labelsCluster', 'networkCluster', 'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
] as const;
const SOURCE = [
  'repository', 'owner', 'branch', 'forgeAId', 'triggerType', 'forgeBId', 'forgeBRepository', 'forgeBOwner', 'forgeBBranch',
  'forgeBPathNamespace', 'forgeBProjectId', 'forgeCId', 'forgeCRepository', 'forgeCRepositorySlug', 'forgeCOwner', 'forgeCBranch',
  'forgeDId', 'forgeDRepository', 'forgeDOwner', 'forgeDBranch', 'customGitUrl', 'customGitBranch', 'customGitSSHKeyId',
  'enableSubmodules', 'autoDeploy', 'watchPaths', 'refreshToken',
] as const;

/** Each service table's columns. */
export const SERVICE_COLUMNS = {
  application: everyColumn<Application>()([
    ...SERVICE, ...RESOURCES, ...CLUSTER, ...SOURCE,
    'sourceType', 'previewEnv', 'buildArgs', 'buildSecrets', 'previewBuildArgs', 'previewBuildSecrets', 'previewWildcard', 'previewPath',
    'previewCustomCertResolver', 'previewCertificateType', 'title', 'subtitle', 'command', 'buildPath', 'forgeBBuildPath', 'forgeCBuildPath',
    'forgeDBuildPath', 'username', 'password', 'containerImage', 'registryUrl', 'customGitBuildPath', 'buildType', 'containerfile',
    'containerContextPath', 'containerBuildStage', 'legacyVersion', 'packTwoVersion', 'publishDirectory', 'dropBuildPath', 'icon',
    'previewPort', 'previewLimit', 'previewHttps', 'isPreviewDeploymentsActive', 'previewRequireCollaboratorPermissions', 'rollbackActive',
    'enabled', 'cleanCache', 'createEnvFile', 'isStaticSpa', 'previewLabels', 'args', 'replicas', 'deployCount',
  ]),
  compose: everyColumn<ComposeStack>()([
    ...SERVICE, ...SOURCE,
    'sourceType', 'composeType', 'composeFile', 'composePath', 'command', 'suffix', 'randomize', 'isolatedDeployment',
    'isolatedDeploymentsVolume', 'configFiles', 'deployedHostPorts',
  ]),
  cache: everyColumn<CacheInstance>()([
    ...SERVICE, ...RESOURCES, ...CLUSTER,
    'containerImage', 'databasePassword', 'command', 'externalPort', 'detachPlatformNetwork', 'args', 'networkIds', 'replicas', 'deployCount',
  ]),
  database: everyColumn<DatabaseService>()([
    ...SERVICE, ...RESOURCES, ...CLUSTER,
    'engine', 'containerImage', 'databaseName', 'databaseUser', 'databasePassword', 'rootPassword', 'replicaSet', 'command', 'args',
    'externalPort', 'networkIds', 'detachPlatformNetwork', 'replicas', 'deployCount',
  ]),
} as const satisfies Record<ServiceKind, readonly string[]>;
