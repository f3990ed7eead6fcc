import type { CacheInstance } from '@skiff/db';
import { PLATFORM_NETWORK, type WorkloadSpecInput } from '@skiff/domain';

/** The port Redis listens on in its container. */
export const REDIS_PORT = 6379;
/** Where the instance's data volume is mounted (the official image's data directory). */
export const CACHE_DATA_DIR = '/data';
/** The variable that carries `databasePassword` into the container. */
export const PASSWORD_VARIABLE = 'REDIS_PASSWORD';
/** The redis-server options used when the instance sets no `args`: data in the volume, every write logged. */
export const DEFAULT_REDIS_OPTIONS = ['--dir', CACHE_DATA_DIR, '--appendonly', 'yes'];

/**
 * redis-server takes its password only as an argument or in a config file, never from the
 * environment. This fixed script (run as `sh -c SCRIPT sh OPTIONS…`) passes it from
 * REDIS_PASSWORD: the value is expanded inside double quotes (no splitting, no globbing, no
 * evaluation), and the options arrive as positional parameters, never parsed by the shell.
 * So the password is in no argument of the service spec (`docker service inspect`,
 * `docker ps --no-trunc`), and no user input is shell text. It goes through the official
 * image's entrypoint when there is one (which drops root for the redis user), and comes last
 * so an option in `args` cannot replace it.
 */
export const REDIS_START_SCRIPT =
  'if command -v docker-entrypoint.sh >/dev/null 2>&1; then set -- docker-entrypoint.sh redis-server "$@"; ' +
  'else set -- redis-server "$@"; fi; exec "$@" --requirepass "$' + PASSWORD_VARIABLE + '"';

/**
 * The named volume holding an instance's data: named after its id, not its appName, so a
 * renamed instance keeps its data. The engine creates it with the instance's `skiff.*`
 * labels, by which `cache.remove` finds it.
 */
export function cacheVolumeName(cacheId: string): string {
  return `skiff-cache-${cacheId.replace(/[^a-zA-Z0-9_.-]/g, '-')}-data`;
}

/**
 * What runs in the container. `command` set: it replaces the image's entrypoint and `args`
 * are its arguments, as given (REDIS_PASSWORD is in its environment to use). Otherwise
 * redis-server with `args` as its options (default DEFAULT_REDIS_OPTIONS) and the password
 * (REDIS_START_SCRIPT).
 */
export function cacheProcess(row: Pick<CacheInstance, 'command' | 'args'>): Pick<WorkloadSpecInput, 'command' | 'args'> {
  if (row.command !== null && row.command.trim() !== '') return { command: row.command, args: row.args };
  return { command: null, args: ['/bin/sh', '-c', REDIS_START_SCRIPT, 'sh', ...(row.args ?? DEFAULT_REDIS_OPTIONS)] };
}

/**
 * The settings of a cache instance's Swarm service, from its columns. `env` is left empty:
 * the variables and the password travel once, in DeployApplication.env (they are secrets).
 * `forceUpdate` grows with every deploy, so each one rolls out a new task.
 */
export function cacheWorkloadSpec(row: CacheInstance, forceUpdate: number): WorkloadSpecInput {
  return {
    appName: row.appName,
    kind: 'cache',
    id: row.id,
    image: row.containerImage,
    env: [],
    ...cacheProcess(row),
    replicas: row.replicas,
    memoryLimit: row.memoryLimit,
    memoryReservation: row.memoryReservation,
    cpuLimit: row.cpuLimit,
    cpuReservation: row.cpuReservation,
    platformNetwork: PLATFORM_NETWORK,
    detachPlatformNetwork: row.detachPlatformNetwork,
    networks: row.networkIds,
    ports: row.externalPort === null ? null : [{ Protocol: 'tcp', TargetPort: REDIS_PORT, PublishedPort: row.externalPort, PublishMode: 'host' }],
    volumes: [{ source: cacheVolumeName(row.id), target: CACHE_DATA_DIR }],
    forceUpdate,
    healthCheckCluster: row.healthCheckCluster as WorkloadSpecInput['healthCheckCluster'],
    restartPolicyCluster: row.restartPolicyCluster as WorkloadSpecInput['restartPolicyCluster'],
    placementCluster: row.placementCluster as WorkloadSpecInput['placementCluster'],
    updateConfigCluster: row.updateConfigCluster as WorkloadSpecInput['updateConfigCluster'],
    rollbackConfigCluster: row.rollbackConfigCluster as WorkloadSpecInput['rollbackConfigCluster'],
    modeCluster: row.modeCluster as WorkloadSpecInput['modeCluster'],
    labelsCluster: row.labelsCluster as WorkloadSpecInput['labelsCluster'],
    networkCluster: row.networkCluster as WorkloadSpecInput['networkCluster'],
    stopGracePeriodCluster: row.stopGracePeriodCluster as WorkloadSpecInput['stopGracePeriodCluster'],
    endpointSpecCluster: row.endpointSpecCluster as WorkloadSpecInput['endpointSpecCluster'],
    ulimitsCluster: row.ulimitsCluster as WorkloadSpecInput['ulimitsCluster'],
  };
}
