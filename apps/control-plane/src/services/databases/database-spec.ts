import type { DatabaseService } from '@skiff/db';
import type { WorkloadSpecInput } from '@skiff/domain';
import { statefulWorkloadSpec } from '../stateful/stateful-spec.js';
import { type Credentials, ENGINES } from './engines.js';

/**
 * The named volume holding a database service's data: named after its id, not its appName,
 * so a renamed service keeps its data. The engine creates it with the service's `skiff.*`
 * labels, by which a removal with `deleteVolume` finds it.
 */
export function databaseVolumeName(id: string): string {
  return `skiff-db-${id.replace(/[^a-zA-Z0-9_.-]/g, '-')}-data`;
}

/** The engine's variables over the service's own (`env` resolved): the credentials always come from the settings. */
export function databaseVariables(row: DatabaseService, credentials: Credentials, variables: Map<string, string>): Map<string, string> {
  const merged = new Map(variables);
  for (const [key, value] of ENGINES[row.engine].variables(credentials, row)) merged.set(key, value);
  return merged;
}

/**
 * The settings of a database service's Swarm service (statefulWorkloadSpec). It travels as
 * the agent's cache workload kind (a Swarm service with a data volume; `skiff.kind=cache`),
 * its id telling it apart. A health check set on the service replaces the engine's.
 */
export function databaseWorkloadSpec(row: DatabaseService, credentials: Credentials, forceUpdate: number): WorkloadSpecInput {
  const engine = ENGINES[row.engine];
  const custom = row.command !== null && row.command.trim() !== '';
  const process = custom ? { command: row.command, args: row.args } : (engine.process(row) ?? { command: null, args: row.args });
  return statefulWorkloadSpec(
    row,
    {
      process,
      port: engine.port,
      volume: { source: databaseVolumeName(row.id), target: engine.dataDir },
      healthCheck: (row.healthCheckCluster as WorkloadSpecInput['healthCheckCluster']) ?? engine.healthCheck(credentials, row),
    },
    forceUpdate,
  );
}

/** The connection strings of `one`: the service name on the platform network, and the published address. */
export function connectionUrls(row: DatabaseService, externalHost: string | null) {
  const engine = ENGINES[row.engine];
  return {
    internalConnectionUrl: engine.url(`${row.appName}:${engine.port}`, row),
    externalConnectionUrl: row.externalPort === null || externalHost === null ? null : engine.url(`${externalHost}:${row.externalPort}`, row),
  };
}
