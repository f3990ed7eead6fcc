import type { DatabaseService } from '@skiff/db';
import { PLATFORM_NETWORK, type WorkloadSpecInput } from '@skiff/domain';
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
 * The settings of a database service's Swarm service. It travels as the agent's cache
 * workload kind (a Swarm service with a data volume; `skiff.kind=cache`), its id telling it
 * apart. `env` is left empty: the variables travel once, in DeployApplication.env (they
 * carry the passwords). A health check set on the service replaces the engine's.
 */
export function databaseWorkloadSpec(row: DatabaseService, credentials: Credentials, forceUpdate: number): WorkloadSpecInput {
  const engine = ENGINES[row.engine];
  const custom = row.command !== null && row.command.trim() !== '';
  const process = custom ? { command: row.command, args: row.args } : (engine.process(row) ?? { command: null, args: row.args });
  return {
    appName: row.appName,
    kind: 'cache',
    id: row.id,
    image: row.containerImage,
    env: [],
    ...process,
    replicas: row.replicas,
    memoryLimit: row.memoryLimit,
    memoryReservation: row.memoryReservation,
    cpuLimit: row.cpuLimit,
    cpuReservation: row.cpuReservation,
    platformNetwork: PLATFORM_NETWORK,
    detachPlatformNetwork: row.detachPlatformNetwork,
    networks: row.networkIds,
    ports: row.externalPort === null ? null : [{ Protocol: 'tcp', TargetPort: engine.port, PublishedPort: row.externalPort, PublishMode: 'host' }],
    volumes: [{ source: databaseVolumeName(row.id), target: engine.dataDir }],
    forceUpdate,
    healthCheckCluster: (row.healthCheckCluster as WorkloadSpecInput['healthCheckCluster']) ?? engine.healthCheck(credentials, row),
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

/** The connection strings of `one`: the service name on the platform network, and the published address. */
export function connectionUrls(row: DatabaseService, externalHost: string | null) {
  const engine = ENGINES[row.engine];
  return {
    internalConnectionUrl: engine.url(`${row.appName}:${engine.port}`, row),
    externalConnectionUrl: row.externalPort === null || externalHost === null ? null : engine.url(`${externalHost}:${row.externalPort}`, row),
  };
}
