import type { CacheInstance, DatabaseService } from '@skiff/db';
import { PLATFORM_NETWORK, type WorkloadSpecInput } from '@skiff/domain';
import type { Located } from '../shared/service-access.js';

/** The stateful service kinds: a Swarm service with a data volume (the agent's cache workload kind). */
export type StatefulKind = 'cache' | 'database';
export type RowOf<K extends StatefulKind> = K extends 'cache' ? CacheInstance : DatabaseService;
export type StatefulRow = CacheInstance | DatabaseService;

/** The row of a located service, as generic code reads it (its columns shared by both kinds). */
export const rowOf = <K extends StatefulKind>(located: Located<K>) => located.row as unknown as StatefulRow;

/** The located service with another version of its row. */
export const withRow = <K extends StatefulKind>(located: Located<K>, row: StatefulRow): Located<K> => ({ ...located, row: row as unknown as Located<K>['row'] });

/** What a kind's Swarm service takes beyond its columns: its process, port, data volume and health check. */
export interface StatefulSpecParts {
  process: Pick<WorkloadSpecInput, 'command' | 'args'>;
  /** The port the server listens on in its container. */
  port: number;
  volume: { source: string; target: string };
  healthCheck: WorkloadSpecInput['healthCheckCluster'];
}

type Cluster = Exclude<keyof WorkloadSpecInput & `${string}Cluster`, 'healthCheckCluster'>;
const CLUSTER: readonly Cluster[] = [
  'restartPolicyCluster', 'placementCluster', 'updateConfigCluster', 'rollbackConfigCluster', 'modeCluster',
  'labelsCluster', 'networkCluster', 'stopGracePeriodCluster', 'endpointSpecCluster', 'ulimitsCluster',
];

/**
 * The settings of a stateful service's Swarm service, from its columns. `env` is left empty:
 * the variables travel once, in DeployApplication.env (they carry secrets). `forceUpdate`
 * grows with every deploy, so each one rolls out a new task.
 */
export function statefulWorkloadSpec(row: StatefulRow, parts: StatefulSpecParts, forceUpdate: number): WorkloadSpecInput {
  const cluster = Object.fromEntries(CLUSTER.map((key) => [key, row[key]])) as unknown as Pick<WorkloadSpecInput, Cluster>;
  return {
    appName: row.appName,
    kind: 'cache',
    id: row.id,
    image: row.containerImage,
    env: [],
    ...parts.process,
    replicas: row.replicas,
    memoryLimit: row.memoryLimit,
    memoryReservation: row.memoryReservation,
    cpuLimit: row.cpuLimit,
    cpuReservation: row.cpuReservation,
    platformNetwork: PLATFORM_NETWORK,
    detachPlatformNetwork: row.detachPlatformNetwork,
    networks: row.networkIds,
    ports: row.externalPort === null ? null : [{ Protocol: 'tcp', TargetPort: parts.port, PublishedPort: row.externalPort, PublishMode: 'host' }],
    volumes: [parts.volume],
    forceUpdate,
    healthCheckCluster: parts.healthCheck,
    ...cluster,
  };
}
