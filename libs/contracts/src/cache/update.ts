import { z } from 'zod';
import { Args, CLUSTER_DESCRIPTION, clusterFields } from '../application/cluster.js';
import { defineContract } from '../contract.js';
import { AppName, NonEmpty, RequiredId, ResourceAmount, Status } from '../primitives.js';
import { CacheRecord } from './record.js';

const text = z.string().nullable().optional();

export const update = defineContract({
  method: 'POST',
  summary: 'Change any settings of a cache instance',
  description:
    'Every field but `cacheId` is optional; only the fields given are changed. ' +
    '`applicationStatus` moves the instance to that status. Changes apply at the next ' +
    '`cache.deploy` (or `cache.rebuild`). `command` (split into words without a shell) replaces ' +
    "the image's entrypoint and `args` are its arguments; `REDIS_PASSWORD` holds the password " +
    'for it to use. Without `command`, redis-server runs with `args` as its options (default ' +
    '`--dir /data --appendonly yes`) and the password always set. `networkIds` lists the Docker networks (names or ids) the instance ' +
    'joins besides the platform network; `detachPlatformNetwork` true leaves the platform ' +
    'network. `createdAt` is read-only and ignored. `environmentId` moves the instance (as ' +
    'cache.move). `externalPort`: 1 to 65535, unique on the server among cache instances; ' +
    '`replicas`: 0 to 1000; memory in bytes and CPU in nano-CPUs, as decimal strings. ' +
    CLUSTER_DESCRIPTION,
  input: z.object({
    cacheId: RequiredId,
    name: NonEmpty.optional(),
    appName: AppName.optional(),
    description: text,
    databasePassword: z.string().optional(),
    containerImage: z.string().optional(),
    command: text,
    args: Args.nullable().optional(),
    env: text,
    memoryReservation: ResourceAmount,
    memoryLimit: ResourceAmount,
    cpuReservation: ResourceAmount,
    cpuLimit: ResourceAmount,
    externalPort: z.number().nullable().optional(),
    createdAt: z.string().optional(),
    applicationStatus: Status.optional(),
    ...clusterFields,
    replicas: z.number().optional(),
    environmentId: z.string().optional(),
    networkIds: z.array(z.string()).optional(),
    detachPlatformNetwork: z.boolean().optional(),
  }),
  output: CacheRecord,
  example: {
    cacheId: 'cch_example',
    containerImage: 'redis:8.2',
    args: ['--dir', '/data', '--appendonly', 'yes', '--maxmemory', '200mb'],
    memoryLimit: '268435456',
    restartPolicyCluster: { Condition: 'any', Delay: 5_000_000_000 },
    ulimitsCluster: [{ Name: 'nofile', Soft: 65536, Hard: 65536 }],
  },
});
