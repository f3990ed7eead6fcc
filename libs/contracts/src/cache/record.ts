import { z } from 'zod';
import {
  Args,
  EndpointSpec,
  HealthCheck,
  Labels,
  Mode,
  Networks,
  Placement,
  RestartPolicy,
  RollbackConfig,
  StopGracePeriod,
  Ulimits,
  UpdateConfig,
} from '../application/cluster.js';
import { Status, Timestamp } from '../primitives.js';

const text = z.string().nullable();

/**
 * A cache instance (a Redis server) as responses show it. The password is write-only: it is
 * encrypted at rest and never returned; `hasDatabasePassword` says that one is set.
 */
export const CacheRecord = z.object({
  cacheId: z.string(),
  environmentId: z.string(),
  serverId: text.describe('the server it runs on; null: the platform host'),
  name: z.string(),
  appName: z.string().describe('the Docker service name; unique on its server across every kind of service'),
  description: text,
  applicationStatus: Status,
  containerImage: z.string().describe('the image it runs (default `redis:8`)'),
  hasDatabasePassword: z.boolean().describe('a password is set (it is never returned)'),
  command: text,
  args: Args.nullable(),
  env: z.string().describe('dotenv text; encrypted at rest'),
  memoryReservation: text.describe('bytes'),
  memoryLimit: text.describe('bytes'),
  cpuReservation: text.describe('nano-CPUs (1000000000 = 1 CPU)'),
  cpuLimit: text.describe('nano-CPUs (1000000000 = 1 CPU)'),
  externalPort: z.number().int().nullable().describe('the host port it is published on; unique on its server among cache instances; null: not published'),
  replicas: z.number().int(),
  networkIds: z.array(z.string()).nullable().describe('Docker networks joined besides the platform network'),
  detachPlatformNetwork: z.boolean().nullable().describe('true: not on the platform network'),
  healthCheckCluster: HealthCheck.nullable(),
  restartPolicyCluster: RestartPolicy.nullable(),
  placementCluster: Placement.nullable(),
  updateConfigCluster: UpdateConfig.nullable(),
  rollbackConfigCluster: RollbackConfig.nullable(),
  modeCluster: Mode.nullable(),
  labelsCluster: Labels.nullable(),
  networkCluster: Networks.nullable(),
  stopGracePeriodCluster: StopGracePeriod.nullable(),
  endpointSpecCluster: EndpointSpec.nullable(),
  ulimitsCluster: Ulimits.nullable(),
  createdAt: Timestamp,
});
