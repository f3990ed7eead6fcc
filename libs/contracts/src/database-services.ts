import { z } from 'zod';
import {
  Args,
  CLUSTER_DESCRIPTION,
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
  clusterFields,
} from './application/cluster.js';
import { QueuedCommand } from './command/record.js';
import { defineContract, defineRouter } from './contract.js';
import { AppName, Id, NonEmpty, RequiredId, ResourceAmount, Status, Timestamp } from './primitives.js';

/**
 * The five database-service routers (dbA..dbE) share one set of operations, modelled on
 * `cache`; each router is built here from its engine's name, default image and id field.
 */
export interface DatabaseRouterSpec<R extends string> {
  router: R;
  engine: 'postgres' | 'mariadb' | 'mysql' | 'mongo' | 'libsql';
  /** The engine's name in documentation. */
  label: string;
  defaultImage: string;
  /** The default port inside the container. */
  port: number;
}

const text = z.string().nullable();
const optionalText = z.string().nullable().optional();
/** A database or user name: the same safe subset for every engine. */
const Identifier = z.string().max(63).regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'letters, digits and underscore, not starting with a digit');

export function databaseRecord<K extends string>(idField: K, spec: DatabaseRouterSpec<string>) {
  return z.object({
    ...({ [idField]: z.string() } as Record<K, z.ZodString>),
    engine: z.literal(spec.engine),
    environmentId: z.string(),
    serverId: text.describe('the server it runs on; null: the platform host'),
    name: z.string(),
    appName: z.string().describe('the Docker service name and its host name on skiff-network; unique on its server across every kind of service'),
    description: text,
    applicationStatus: Status,
    containerImage: z.string().describe(`the image it runs (default \`${spec.defaultImage}\`)`),
    databaseName: text,
    databaseUser: text,
    hasDatabasePassword: z.boolean().describe('a password is set (it is never returned)'),
    hasRootPassword: z.boolean().describe('a root password is set (MariaDB, MySQL; never returned)'),
    replicaSet: z.boolean().describe('MongoDB: runs as a one-member replica set'),
    internalConnectionUrl: z.string().describe('the address other services of the platform network use; no password'),
    externalConnectionUrl: text.describe('the server address and `externalPort`, when published and the address is known; no password'),
    command: text,
    args: Args.nullable(),
    env: z.string().describe('dotenv text; encrypted at rest'),
    memoryReservation: text,
    memoryLimit: text,
    cpuReservation: text,
    cpuLimit: text,
    externalPort: z.number().int().nullable(),
    replicas: z.number().int(),
    networkIds: z.array(z.string()).nullable(),
    detachPlatformNetwork: z.boolean().nullable(),
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
}

const QUEUED = ' Answers the command it queued (`commandId`; follow it with `command.one`).';

/** The router of one engine: the same operations as `cache`, with its id field `<router>Id`. */
export function databaseRouter<R extends string>(spec: DatabaseRouterSpec<R>) {
  const idField = `${spec.router}Id` as `${R}Id`;
  const idOf = <T extends z.ZodType>(t: T) => ({ [idField]: t }) as Record<`${R}Id`, T>;
  // The examples' types depend on R: checked by tools/check-contracts.ts instead.
  const ex = (extra: object = {}) => ({ [idField]: 'dbs_example', ...extra }) as never;
  const Record = databaseRecord(idField, spec);
  const what = `${spec.label} service`;
  const extension = true as const;
  const secrets =
    '`databasePassword` (and `rootPassword`, MariaDB and MySQL only) are generated when absent, encrypted at rest and never returned. ';
  return defineRouter(spec.router, {
    create: defineContract({
      method: 'POST',
      summary: `Create a ${what} in an environment`,
      description:
        secrets +
        '`databaseName` and `databaseUser` (letters, digits, underscore) default to `app` (libSQL takes neither: its user and ' +
        'password guard its HTTP API). `replicaSet` is MongoDB only. `appName` is unique on its server across every kind of ' +
        `service. \`containerImage\` defaults to \`${spec.defaultImage}\`; any image of the same engine may replace it.`,
      input: z.object({
        name: NonEmpty,
        appName: AppName.optional(),
        environmentId: Id,
        serverId: z.string().nullable().optional(),
        description: optionalText,
        containerImage: z.string().default(spec.defaultImage),
        databaseName: Identifier.optional(),
        databaseUser: Identifier.optional(),
        databasePassword: z.string().optional(),
        rootPassword: z.string().optional(),
        replicaSet: z.boolean().optional(),
      }),
      output: Record,
      access: { grant: 'canCreateServices' },
      extension,
      example: { name: 'Orders', appName: `shop-${spec.engine}`, environmentId: 'env_example' },
    }),
    one: defineContract({
      method: 'GET',
      summary: `A ${what} with its settings and connection strings`,
      input: z.object(idOf(RequiredId)),
      output: Record,
      extension,
      example: ex(),
    }),
    update: defineContract({
      method: 'POST',
      summary: `Change any settings of a ${what}`,
      description:
        'Every field but the id is optional; only the fields given are changed; they apply at the next deploy. ' +
        '`databaseName` and `databaseUser` only take effect on an empty data volume (the engine creates them at its first start). ' +
        CLUSTER_DESCRIPTION,
      input: z.object({
        ...idOf(RequiredId),
        name: NonEmpty.optional(),
        appName: AppName.optional(),
        description: optionalText,
        containerImage: z.string().optional(),
        databaseName: Identifier.optional(),
        databaseUser: Identifier.optional(),
        databasePassword: z.string().optional(),
        rootPassword: z.string().optional(),
        replicaSet: z.boolean().optional(),
        command: optionalText,
        args: Args.nullable().optional(),
        env: optionalText,
        memoryReservation: ResourceAmount,
        memoryLimit: ResourceAmount,
        cpuReservation: ResourceAmount,
        cpuLimit: ResourceAmount,
        externalPort: z.number().nullable().optional(),
        applicationStatus: Status.optional(),
        ...clusterFields,
        replicas: z.number().optional(),
        networkIds: z.array(z.string()).optional(),
        detachPlatformNetwork: z.boolean().optional(),
      }),
      output: Record,
      extension,
      example: ex({ memoryLimit: '536870912' }),
    }),
    deploy: defineContract({
      method: 'POST',
      summary: `Deploy the ${what}`,
      description:
        `Queues the rollout of a Swarm service named \`appName\` running \`containerImage\`, its data on a named volume ` +
        '(kept across deploys, `rebuild` and a `remove` without `deleteVolume`), the engine\'s variables set from the ' +
        'service\'s settings, a health check, `externalPort` published on the host (host mode). `applicationStatus` is ' +
        '`running` until the task runs (`done`) or fails (`error`).' + QUEUED,
      input: z.object(idOf(Id)),
      output: QueuedCommand,
      extension,
      example: ex(),
    }),
    rebuild: defineContract({
      method: 'POST',
      summary: `Recreate the ${what} from its image, keeping its data`,
      input: z.object(idOf(Id)),
      output: QueuedCommand,
      extension,
      description: 'Removes its Swarm service (the volume is kept) and deploys it again.' + QUEUED,
      example: ex(),
    }),
    start: defineContract({
      method: 'POST',
      summary: `Start the ${what}`,
      description: 'BAD_REQUEST when it was never deployed.' + QUEUED,
      input: z.object(idOf(RequiredId)),
      output: QueuedCommand,
      extension,
      example: ex(),
    }),
    stop: defineContract({
      method: 'POST',
      summary: `Stop the ${what}`,
      description: 'Scaled to 0; data and settings kept. BAD_REQUEST when it was never deployed.' + QUEUED,
      input: z.object(idOf(RequiredId)),
      output: QueuedCommand,
      extension,
      example: ex(),
    }),
    reload: defineContract({
      method: 'POST',
      summary: `Restart the ${what}`,
      description: "A new container on the same data; `appName` must be the service's own." + QUEUED,
      input: z.object({ ...idOf(Id), appName: AppName }),
      output: QueuedCommand,
      extension,
      example: ex({ appName: `shop-${spec.engine}` }),
    }),
    remove: defineContract({
      method: 'POST',
      summary: `Remove the ${what} and its container; its data volume too unless \`deleteVolume\` is false`,
      description:
        'Answers the removed record. One never deployed goes at once; otherwise the record goes when the agent reports ' +
        'the service (and, with `deleteVolume`, default true, its volume) gone.',
      input: z.object({ ...idOf(RequiredId), deleteVolume: z.boolean().default(true) }),
      output: Record,
      access: { grant: 'canDeleteServices' },
      extension,
      example: ex({ deleteVolume: false }),
    }),
    saveExternalPort: defineContract({
      method: 'POST',
      summary: `Publish the ${what} on a host port, or stop publishing it (null)`,
      description: '1 to 65535, unique on the server among database services. A deployed service is deployed again at once.',
      input: z.object({ ...idOf(Id), externalPort: z.number().nullable() }),
      output: Record,
      extension,
      example: ex({ externalPort: spec.port + 10000 }),
    }),
    saveEnvironment: defineContract({
      method: 'POST',
      summary: `Save the environment variables of the ${what}`,
      description: "Dotenv text; applies at the next deploy. The engine's credential variables always come from the service's settings.",
      input: z.object({ ...idOf(Id), env: z.string().nullable() }),
      output: Record,
      extension,
      example: ex({ env: 'TZ=Europe/Berlin' }),
    }),
    changeStatus: defineContract({
      method: 'POST',
      summary: `Set the status of the ${what}`,
      input: z.object({ ...idOf(Id), applicationStatus: Status }),
      output: Record,
      extension,
      example: ex({ applicationStatus: 'done' }),
    }),
    move: defineContract({
      method: 'POST',
      summary: `Move a ${what} to another environment of the organization`,
      input: z.object({ ...idOf(Id), targetEnvironmentId: Id }),
      output: Record,
      extension,
      example: ex({ targetEnvironmentId: 'env_example' }),
    }),
  });
}
