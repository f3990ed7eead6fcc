/**
 * The agent's port to a Docker Engine in Swarm mode. Command handlers and the reconcile loop
 * use only this interface; `DockerodeDriver` implements it against the Engine API. Every
 * method throws a `DockerError` subclass (./errors.ts) carrying the engine's message.
 *
 * Shapes passed in are the Engine API's own (PascalCase keys, durations in nanoseconds), as
 * a pure builder produces them; shapes returned are the driver's own small summaries.
 */
import type { HealthCheckConfig, UlimitConfig } from '@skiff/domain';

/** Label every Docker object Skiff creates carries (ARCHITECTURE.md, "Workloads on Docker"). */
export const MANAGED_LABEL = 'skiff.managed';

export type Nanoseconds = number;

/**
 * A Swarm service spec (Engine API 1.41, body of `POST /services/create` and `/update`).
 * Only `Name` and `Labels` are required here; the fields are as wide as the engine takes,
 * so the stricter spec a builder produces is assignable to this type.
 */
export interface ServiceSpec {
  Name: string;
  /** Must include `skiff.managed: "true"`: the driver writes and removes only Skiff's services. */
  Labels: Record<string, string>;
  TaskTemplate: {
    ContainerSpec: {
      Image: string;
      Labels?: Record<string, string>;
      Command?: string[];
      Args?: string[];
      Hostname?: string;
      Env?: string[];
      Dir?: string;
      User?: string;
      Init?: boolean;
      Mounts?: Array<{
        Type: 'volume' | 'bind' | 'tmpfs';
        Source?: string;
        Target: string;
        ReadOnly?: boolean;
        /** Labels of a volume the engine creates for the mount. */
        VolumeOptions?: { Labels?: Record<string, string> };
      }>;
      StopSignal?: string;
      StopGracePeriod?: Nanoseconds;
      HealthCheck?: HealthCheckConfig;
      Hosts?: string[];
      Ulimits?: UlimitConfig[];
      /** Swarm secrets as files under /run/secrets (ids from `ensureSecret`). */
      Secrets?: Array<{ SecretID: string; SecretName: string; File: { Name: string; UID: string; GID: string; Mode: number } }>;
    };
    Resources?: {
      Limits?: { NanoCPUs?: number; MemoryBytes?: number };
      Reservations?: { NanoCPUs?: number; MemoryBytes?: number };
    };
    RestartPolicy?: {
      Condition?: 'none' | 'on-failure' | 'any';
      Delay?: Nanoseconds;
      MaxAttempts?: number;
      Window?: Nanoseconds;
    };
    Placement?: {
      Constraints?: string[];
      Preferences?: Array<{ Spread: { SpreadDescriptor: string } }>;
      MaxReplicas?: number;
      Platforms?: Array<{ Architecture?: string; OS?: string }>;
    };
    Networks?: Array<{ Target: string; Aliases?: string[]; DriverOpts?: Record<string, string> }>;
    LogDriver?: { Name: string; Options?: Record<string, string> };
    /** Change it to roll out new tasks although nothing else changed (a redeploy). */
    ForceUpdate?: number;
  };
  Mode?:
    | { Replicated: { Replicas?: number } }
    | { Global: Record<string, never> }
    | { ReplicatedJob: { MaxConcurrent?: number; TotalCompletions?: number } }
    | { GlobalJob: Record<string, never> };
  UpdateConfig?: RolloutConfig & { FailureAction?: 'continue' | 'pause' | 'rollback' };
  RollbackConfig?: RolloutConfig & { FailureAction?: 'continue' | 'pause' };
  EndpointSpec?: {
    /** `dnsrr` where the kernel has no IPVS (the routing mesh needs it). */
    Mode?: 'vip' | 'dnsrr';
    Ports?: Array<{
      Protocol?: 'tcp' | 'udp' | 'sctp';
      TargetPort: number;
      PublishedPort?: number;
      PublishMode?: 'ingress' | 'host';
      Name?: string;
    }>;
  };
}

export interface RolloutConfig {
  Parallelism: number;
  Delay?: Nanoseconds;
  Monitor?: Nanoseconds;
  MaxFailureRatio?: number;
  Order?: 'stop-first' | 'start-first';
}

/** Credentials for the registry of a service's image (sent as `X-Registry-Auth`). */
export interface RegistryAuth {
  username: string;
  password: string;
  /** The registry host, e.g. `registry.example.com:5000`. */
  serveraddress: string;
}

export interface SwarmInfo {
  nodeId: string;
  /** True when this call initialised the swarm. */
  created: boolean;
}

export interface NetworkInfo {
  id: string;
  name: string;
  /** True when this call created the network. */
  created: boolean;
}

export interface ServiceInfo {
  id: string;
  name: string;
  /** The swarm object version; an update must name the current one. */
  version: number;
  labels: Record<string, string>;
  image: string;
  /** Replicas wanted, or null for global and job modes. */
  replicas: number | null;
  /** Rollout of the last update: `updating`, `completed`, `rollback_completed`…; null before any update. */
  updateState: string | null;
  updateMessage: string | null;
  createdAt: string;
  updatedAt: string;
  /** The image of the spec before the last update (what a rollback returns to), or null. */
  previousImage?: string | null;
}

export interface LocalImage {
  id: string;
  /** `repository:tag` names; empty for an untagged image. */
  tags: string[];
  /** Seconds since the epoch. */
  created: number;
  labels: Record<string, string>;
}

export interface ServiceWriteResult extends ServiceInfo {
  /** True when the service was created, false when an existing one was updated. */
  created: boolean;
  /** Warnings the engine returned (e.g. an image it could not resolve on a registry). */
  warnings: string[];
}

/** Swarm task states, in the order a task moves through them. */
export type TaskState =
  | 'new'
  | 'allocated'
  | 'pending'
  | 'assigned'
  | 'accepted'
  | 'preparing'
  | 'ready'
  | 'starting'
  | 'running'
  | 'complete'
  | 'shutdown'
  | 'failed'
  | 'rejected'
  | 'remove'
  | 'orphaned';

export interface TaskInfo {
  id: string;
  /** The replica slot (replicated mode), or null. */
  slot: number | null;
  nodeId: string | null;
  state: TaskState;
  desiredState: TaskState;
  /** The engine's short status message, e.g. `started` or `preparing`. */
  message: string;
  /** Why the task failed or was rejected (e.g. `No such image: …`), or null. */
  error: string | null;
  exitCode: number | null;
  containerId: string | null;
  image: string;
  /** The task's container labels (from the spec's ContainerSpec.Labels): tell rollouts apart. */
  labels: Record<string, string>;
  /** The task's TaskTemplate.ForceUpdate (0 when unset): tells the tasks of a reload apart. */
  forceUpdate: number;
  createdAt: string;
  updatedAt: string;
}

/** What `updateService` found and did. */
export interface ServiceChangeResult extends ServiceInfo {
  /** False when `change` asked for nothing (the service was left as it was). */
  changed: boolean;
  /** Warnings the engine returned for the update. */
  warnings: string[];
}

/** Gets a service's current spec; answers the spec to write, or null to leave it. */
export type ServiceChange = (spec: ServiceSpec, current: ServiceInfo) => ServiceSpec | null;

export interface CreateOrUpdateOptions {
  registryAuth?: RegistryAuth;
}

export interface PullOptions {
  /** The registry login; never logged, sent only in the `X-Registry-Auth` header. */
  registryAuth?: RegistryAuth;
  /** The pull is abandoned when this aborts (the agent stops). */
  signal?: AbortSignal;
  /** The pull fails with a DockerError when it has not finished in this time. Default 10 minutes. */
  timeoutMs?: number;
}

/**
 * A plain container (Engine API 1.41, body of `POST /containers/create`, with its name), for
 * the few Skiff objects that are not Swarm services (the `skiff-proxy`).
 */
export interface ContainerSpec {
  Name: string;
  /** Must include `skiff.managed: "true"`: the driver starts and removes only Skiff's containers. */
  Labels: Record<string, string>;
  Image: string;
  Cmd?: string[];
  Env?: string[];
  ExposedPorts?: Record<string, Record<string, never>>;
  HostConfig?: {
    Mounts?: Array<{ Type: 'volume' | 'bind' | 'tmpfs'; Source?: string; Target: string; ReadOnly?: boolean }>;
    PortBindings?: Record<string, Array<{ HostIp?: string; HostPort: string }>>;
    RestartPolicy?: { Name: 'no' | 'always' | 'unless-stopped' | 'on-failure'; MaximumRetryCount?: number };
    Init?: boolean;
    /** The network the container starts on (an attachable overlay network works). */
    NetworkMode?: string;
    /** `name:address` lines for the container's /etc/hosts (`host-gateway`: the host). */
    ExtraHosts?: string[];
  };
}

export type ContainerState = 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';

export interface ContainerInfo {
  id: string;
  name: string;
  image: string;
  labels: Record<string, string>;
  state: ContainerState;
  exitCode: number | null;
  startedAt: string;
  finishedAt: string;
  /** The container's environment, `NAME=value` (values may be secrets: never log them). */
  env: string[];
}

export interface VolumeInfo {
  name: string;
  /** True when this call created the volume. */
  created: boolean;
}

export interface DockerDriver {
  /** Makes sure the engine is a manager of an active swarm, initialising a single-node one if none. */
  ensureSwarm(): Promise<SwarmInfo>;
  /** An overlay network, attachable, labelled `skiff.managed=true`; an existing compatible one is kept. */
  ensureNetwork(name: string): Promise<NetworkInfo>;
  /** Creates the service named `spec.Name`, or updates it (passing its current version). */
  createOrUpdateService(spec: ServiceSpec, options?: CreateOrUpdateOptions): Promise<ServiceWriteResult>;
  /**
   * Reads the Skiff service `name`, hands its spec to `change` and writes what that answers
   * (read again and retried when another writer came in between). Null when there is no such
   * service; a DockerConflictError when it is not managed by Skiff. Registry credentials
   * given at its last write stay with it.
   */
  updateService(name: string, change: ServiceChange): Promise<ServiceChangeResult | null>;
  /**
   * The engine's rollback (`docker service rollback`): the service goes back to its previous
   * spec, rolled out with its rollback config. `no-previous-version` when the service was
   * never updated (it has no previous spec), `missing` when there is no such service; a
   * DockerConflictError when it is not managed by Skiff.
   */
  rollbackService(name: string): Promise<'rolled-back' | 'no-previous-version' | 'missing'>;
  /** Removes a Skiff service; false when there was none. Its tasks stop asynchronously. */
  removeService(name: string): Promise<boolean>;
  /** The service's tasks, newest first. */
  serviceTasks(name: string): Promise<TaskInfo[]>;
  /** Services carrying every given label (`{ 'skiff.managed': 'true' }`: all of Skiff's). */
  servicesByLabel(labels: Record<string, string>): Promise<ServiceInfo[]>;
  /** Whether the image is present locally (no pull, no registry call). */
  imageExists(ref: string): Promise<boolean>;
  /** Pulls the image from its registry; a failure carries the registry's reason (e.g. `unauthorized`). */
  pullImage(ref: string, options?: PullOptions): Promise<void>;
  /** Tags the local image `source` as `target` (`host/path:tag`), pushes it, and answers the digest the registry gave it. */
  pushImage(source: string, target: string, options?: PullOptions): Promise<string>;
  /** Local images carrying every given label, newest first. */
  imagesByLabel(labels: Record<string, string>): Promise<LocalImage[]>;
  /**
   * Removes one tag of a Skiff-built image (the image goes with its last tag); false when
   * there was none. A DockerConflictError when it is not Skiff's, or while a container (even
   * a stopped one) uses the image it would delete.
   */
  removeImageTag(tag: string): Promise<boolean>;
  /** The container `name`, or null when there is none. */
  containerByName(name: string): Promise<ContainerInfo | null>;
  /** Creates (does not start) the container `spec.Name`; a DockerConflictError when the name is taken. */
  createContainer(spec: ContainerSpec): Promise<ContainerInfo>;
  /** Starts a Skiff container (nothing when it runs); a DockerConflictError when it is not managed by Skiff. */
  startContainer(name: string): Promise<void>;
  /** Removes a Skiff container, running or not; false when there was none. */
  removeContainer(name: string): Promise<boolean>;
  /** The last `lines` lines of a Skiff container's output (oldest first); [] when it is gone. */
  containerLogTail(containerId: string, lines: number): Promise<string[]>;
  /** A local volume labelled `skiff.managed=true` (and `labels`); an existing one of that name is kept. */
  ensureVolume(name: string, labels?: Record<string, string>): Promise<VolumeInfo>;
  /** The id of the Swarm secret `name`, created with `data` when missing (a secret never changes: name a new content anew). */
  ensureSecret(name: string, data: string, labels?: Record<string, string>): Promise<string>;
  /** The local containers (running or not) carrying every given label. */
  containersByLabel(labels: Record<string, string>): Promise<Array<{ id: string; state: ContainerState }>>;
  /** Names of the local volumes carrying every given label, sorted. */
  volumesByLabel(labels: Record<string, string>): Promise<string[]>;
  /**
   * Removes a Skiff volume; false when there was none. A DockerConflictError when it is not
   * managed by Skiff, or while a container still uses it.
   */
  removeVolume(name: string): Promise<boolean>;
}
