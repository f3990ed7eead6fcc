import { z } from 'zod';

const Nanoseconds = z.number().int().min(0).describe('a duration in nanoseconds');
const Count = z.number().int().min(0);
const Port = z.number().int().min(1).max(65535);
const StringMap = z.record(z.string(), z.string());

export const HealthCheck = z
  .strictObject({
    Test: z
      .array(z.string())
      .describe('[] inherits the image check; ["NONE"], ["CMD", ...] or ["CMD-SHELL", cmd]'),
    Interval: Nanoseconds.optional(),
    Timeout: Nanoseconds.optional(),
    StartPeriod: Nanoseconds.optional(),
    StartInterval: Nanoseconds.optional(),
    Retries: Count.optional(),
  })
  .describe('Swarm TaskTemplate.ContainerSpec.HealthCheck');

export const RestartPolicy = z
  .strictObject({
    Condition: z.enum(['none', 'on-failure', 'any']).optional(),
    Delay: Nanoseconds.optional(),
    MaxAttempts: Count.optional(),
    Window: Nanoseconds.optional(),
  })
  .describe('Swarm TaskTemplate.RestartPolicy');

export const Placement = z
  .strictObject({
    Constraints: z.array(z.string()).optional(),
    Preferences: z
      .array(z.strictObject({ Spread: z.strictObject({ SpreadDescriptor: z.string() }) }))
      .optional(),
    MaxReplicas: Count.optional(),
    Platforms: z
      .array(z.strictObject({ Architecture: z.string().optional(), OS: z.string().optional() }))
      .optional(),
  })
  .describe('Swarm TaskTemplate.Placement');

const updateFields = {
  Parallelism: Count,
  Delay: Nanoseconds.optional(),
  Monitor: Nanoseconds.optional(),
  MaxFailureRatio: z.number().min(0).max(1).optional(),
  Order: z.enum(['stop-first', 'start-first']).optional(),
};

export const UpdateConfig = z
  .strictObject({
    ...updateFields,
    FailureAction: z.enum(['continue', 'pause', 'rollback']).optional(),
  })
  .describe('Swarm UpdateConfig');

export const RollbackConfig = z
  .strictObject({ ...updateFields, FailureAction: z.enum(['continue', 'pause']).optional() })
  .describe('Swarm RollbackConfig');

export const Mode = z
  .union([
    z.strictObject({ Replicated: z.strictObject({ Replicas: Count.optional() }) }),
    z.strictObject({ Global: z.strictObject({}) }),
    z.strictObject({
      ReplicatedJob: z.strictObject({
        MaxConcurrent: Count.optional(),
        TotalCompletions: Count.optional(),
      }),
    }),
    z.strictObject({ GlobalJob: z.strictObject({}) }),
  ])
  .describe('Swarm Mode: exactly one of Replicated, Global, ReplicatedJob, GlobalJob');

export const Labels = StringMap.describe('Swarm service Labels');

export const Networks = z
  .array(
    z.strictObject({
      Target: z.string().min(1).describe('network name or id'),
      Aliases: z.array(z.string()).optional(),
      DriverOpts: StringMap.optional(),
    }),
  )
  .describe('Swarm TaskTemplate.Networks (in addition to the platform network)');

export const StopGracePeriod = Nanoseconds.describe(
  'Swarm TaskTemplate.ContainerSpec.StopGracePeriod, in nanoseconds',
);

export const EndpointSpec = z
  .strictObject({
    Mode: z.enum(['vip', 'dnsrr']).optional(),
    Ports: z
      .array(
        z.strictObject({
          Protocol: z.enum(['tcp', 'udp', 'sctp']).optional(),
          TargetPort: Port,
          PublishedPort: Port.optional(),
          PublishMode: z.enum(['ingress', 'host']).optional(),
          Name: z.string().optional(),
        }),
      )
      .optional(),
  })
  .describe('Swarm EndpointSpec');

export const Ulimits = z
  .array(
    z.strictObject({ Name: z.string().min(1), Soft: z.number().int(), Hard: z.number().int() }),
  )
  .describe('Swarm TaskTemplate.ContainerSpec.Ulimits');

export const WatchPaths = z
  .array(z.string())
  .describe('globs; a push deploys only when a changed file matches one');
export const PreviewLabels = z
  .array(z.string())
  .describe('pull-request labels that enable a preview deployment');
export const Args = z.array(z.string()).describe('arguments passed to the command');
export const Icon = z.string().describe('an icon for the dashboard (URL or data URI)');

/** The `*Cluster` fields of application.update and cache.update. */
export const clusterFields = {
  healthCheckCluster: HealthCheck.nullable().optional(),
  restartPolicyCluster: RestartPolicy.nullable().optional(),
  placementCluster: Placement.nullable().optional(),
  updateConfigCluster: UpdateConfig.nullable().optional(),
  rollbackConfigCluster: RollbackConfig.nullable().optional(),
  modeCluster: Mode.nullable().optional(),
  labelsCluster: Labels.nullable().optional(),
  networkCluster: Networks.nullable().optional(),
  stopGracePeriodCluster: StopGracePeriod.nullable().optional(),
  endpointSpecCluster: EndpointSpec.nullable().optional(),
  ulimitsCluster: Ulimits.nullable().optional(),
};

/** Which networks `networkCluster` targets and a cache's `networkIds` may name. */
export const NETWORKS_RULE =
  'A network (`networkCluster` Target, `networkIds`) must be the platform network `skiff-network` or ' +
  "the isolated network of a compose stack of the caller's organization on the same server (named " +
  "after the stack's appName); other names and network ids only for a platform administrator, and " +
  "another organization's stack network never. Refused with BAD_REQUEST naming the field, when " +
  'saved and again at deploy.';

export const CLUSTER_DESCRIPTION =
  "The `*Cluster` fields take the Docker Swarm service-spec shapes with Docker's PascalCase keys " +
  '(HealthCheck, RestartPolicy, Placement, UpdateConfig, RollbackConfig, Mode, Labels, Networks, ' +
  'StopGracePeriod, EndpointSpec, Ulimits); durations are integer nanoseconds. Unknown keys are ' +
  'refused so a misspelt setting is never silently dropped. null clears a setting (Swarm default). ' +
  NETWORKS_RULE;
