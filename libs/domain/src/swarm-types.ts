/**
 * Docker Engine API (1.41) shapes for a Swarm service, as dockerode's `createService()` and
 * `service.update()` take them: PascalCase keys, durations in integer nanoseconds.
 * The `*Cluster` settings stored for applications and cache instances use the same shapes
 * (see libs/contracts/src/application/cluster.ts), so they pass through unchanged.
 */

export type Nanoseconds = number;

export interface HealthCheckConfig {
  /** [] inherits the image's check; ["NONE"], ["CMD", ...] or ["CMD-SHELL", cmd]. */
  Test: string[];
  Interval?: Nanoseconds;
  Timeout?: Nanoseconds;
  StartPeriod?: Nanoseconds;
  StartInterval?: Nanoseconds;
  Retries?: number;
}

export interface RestartPolicyConfig {
  Condition?: 'none' | 'on-failure' | 'any';
  Delay?: Nanoseconds;
  MaxAttempts?: number;
  Window?: Nanoseconds;
}

export interface PlacementConfig {
  Constraints?: string[];
  Preferences?: Array<{ Spread: { SpreadDescriptor: string } }>;
  MaxReplicas?: number;
  Platforms?: Array<{ Architecture?: string; OS?: string }>;
}

interface RolloutFields {
  Parallelism: number;
  Delay?: Nanoseconds;
  Monitor?: Nanoseconds;
  MaxFailureRatio?: number;
  Order?: 'stop-first' | 'start-first';
}

export interface UpdateConfigSpec extends RolloutFields {
  FailureAction?: 'continue' | 'pause' | 'rollback';
}

export interface RollbackConfigSpec extends RolloutFields {
  FailureAction?: 'continue' | 'pause';
}

/** Exactly one of Replicated, Global, ReplicatedJob, GlobalJob. */
export type ServiceMode =
  | { Replicated: { Replicas?: number } }
  | { Global: Record<string, never> }
  | { ReplicatedJob: { MaxConcurrent?: number; TotalCompletions?: number } }
  | { GlobalJob: Record<string, never> };

export interface NetworkAttachment {
  /** A network name or id. */
  Target: string;
  Aliases?: string[];
  DriverOpts?: Record<string, string>;
}

export interface PortConfig {
  Protocol?: 'tcp' | 'udp' | 'sctp';
  TargetPort: number;
  PublishedPort?: number;
  PublishMode?: 'ingress' | 'host';
  Name?: string;
}

export interface EndpointSpecConfig {
  Mode?: 'vip' | 'dnsrr';
  Ports?: PortConfig[];
}

export interface UlimitConfig {
  Name: string;
  Soft: number;
  Hard: number;
}

/** The eleven `*Cluster` settings; null or absent means "Skiff's default". */
export interface ClusterSettings {
  healthCheckCluster?: HealthCheckConfig | null;
  restartPolicyCluster?: RestartPolicyConfig | null;
  placementCluster?: PlacementConfig | null;
  updateConfigCluster?: UpdateConfigSpec | null;
  rollbackConfigCluster?: RollbackConfigSpec | null;
  modeCluster?: ServiceMode | null;
  labelsCluster?: Record<string, string> | null;
  networkCluster?: NetworkAttachment[] | null;
  stopGracePeriodCluster?: Nanoseconds | null;
  endpointSpecCluster?: EndpointSpecConfig | null;
  ulimitsCluster?: UlimitConfig[] | null;
}

export interface VolumeMount {
  Type: 'volume' | 'bind';
  Source: string;
  Target: string;
  ReadOnly?: boolean;
  /** Labels of the volume when the engine creates it for this mount. */
  VolumeOptions?: { Labels?: Record<string, string> };
}

export interface ResourceAmounts {
  NanoCPUs?: number;
  MemoryBytes?: number;
}

export interface ContainerSpec {
  Image: string;
  Labels: Record<string, string>;
  Command?: string[];
  Args?: string[];
  Env: string[];
  Mounts?: VolumeMount[];
  HealthCheck?: HealthCheckConfig;
  StopGracePeriod?: Nanoseconds;
  Ulimits?: UlimitConfig[];
  Init: boolean;
}

export interface TaskTemplate {
  ContainerSpec: ContainerSpec;
  Resources?: { Limits?: ResourceAmounts; Reservations?: ResourceAmounts };
  RestartPolicy: RestartPolicyConfig;
  Placement?: PlacementConfig;
  Networks: NetworkAttachment[];
  ForceUpdate?: number;
}

/** The body of `POST /services/create` and `POST /services/{id}/update`. */
export interface SwarmServiceSpec {
  Name: string;
  Labels: Record<string, string>;
  TaskTemplate: TaskTemplate;
  Mode: ServiceMode;
  UpdateConfig?: UpdateConfigSpec;
  RollbackConfig?: RollbackConfigSpec;
  EndpointSpec: EndpointSpecConfig;
}
