import type { CacheInstance } from '@skiff/db';
import type { WorkloadSpecInput } from '@skiff/domain';
import { statefulWorkloadSpec } from '../stateful/stateful-spec.js';

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
 * The settings of a cache instance's Swarm service, from its columns (statefulWorkloadSpec):
 * the password travels with the variables, in DeployApplication.env.
 */
export function cacheWorkloadSpec(row: CacheInstance, forceUpdate: number): WorkloadSpecInput {
  const volume = { source: cacheVolumeName(row.id), target: CACHE_DATA_DIR };
  const healthCheck = row.healthCheckCluster as WorkloadSpecInput['healthCheckCluster'];
  return statefulWorkloadSpec(row, { process: cacheProcess(row), port: REDIS_PORT, volume, healthCheck }, forceUpdate);
}
