/**
 * A workload's service settings on the agent channel: WorkloadSpecInput to the protocol's
 * typed WorkloadSpec (the control plane) and back (the agent). Pure.
 *
 * What the command carries beside the spec (the workload's name, kind and id, the image and
 * the environment) is not in it. The round trip keeps every setting that changes the Swarm
 * service spec; it drops only what makes no difference there: empty lists and maps (an empty
 * `args`, `Constraints`, `Aliases`…) come back absent, and an empty `command` or size comes
 * back null.
 */
import type {
  EndpointSpec as WireEndpointSpec,
  HealthCheck as WireHealthCheck,
  NetworkAttachment as WireNetworkAttachment,
  Placement as WirePlacement,
  PortConfig as WirePortConfig,
  RestartPolicy as WireRestartPolicy,
  ServiceMode as WireServiceMode,
  UpdateConfig as WireUpdateConfig,
  WorkloadSpec,
} from '@skiff/proto';
import type { VolumeInput, WorkloadSpecInput } from './swarm-spec.js';
import type {
  EndpointSpecConfig,
  HealthCheckConfig,
  NetworkAttachment,
  PlacementConfig,
  PortConfig,
  RestartPolicyConfig,
  RollbackConfigSpec,
  ServiceMode,
  UpdateConfigSpec,
} from './swarm-types.js';

/**
 * What a control plane that sends `spec` puts in the superseded `spec_json`: an agent too old
 * to read `spec` refuses a workload of this kind, and its refusal names it.
 */
export const LEGACY_SPEC_REFUSAL = JSON.stringify({ kind: 'this deploy needs an agent that reads DeployApplication.spec: update the agent' });

/** The identity, image and environment the command carries beside the spec. */
export type WorkloadIdentity = Pick<WorkloadSpecInput, 'appName' | 'kind' | 'id' | 'image' | 'env'>;

// int64 travels as decimal text (ts-proto's forceLong=string).
const int64 = (n: number | null | undefined): string | undefined => (n === undefined || n === null ? undefined : String(Math.trunc(n)));
const number = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));
const listOrAbsent = <T>(list: T[] | undefined): T[] | undefined => (list && list.length > 0 ? list : undefined);
const mapOrAbsent = (map: Record<string, string> | undefined): Record<string, string> | undefined =>
  map && Object.keys(map).length > 0 ? map : undefined;

/** An object without its undefined fields, so that a decoded setting compares equal to the stored one. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function workloadSpecToWire(input: WorkloadSpecInput): WorkloadSpec {
  return {
    command: input.command ?? '',
    args: input.args ?? [],
    replicas: input.replicas,
    memoryLimit: input.memoryLimit ?? '',
    memoryReservation: input.memoryReservation ?? '',
    cpuLimit: input.cpuLimit ?? '',
    cpuReservation: input.cpuReservation ?? '',
    platformNetwork: input.platformNetwork,
    detachPlatformNetwork: input.detachPlatformNetwork ?? false,
    networks: input.networks ?? [],
    ports: (input.ports ?? []).map(portToWire),
    volumes: (input.volumes ?? []).map((v) => ({ source: v.source, target: v.target, readOnly: v.readOnly ?? false })),
    binds: (input.binds ?? []).map((v) => ({ source: v.source, target: v.target, readOnly: v.readOnly ?? false })),
    forceUpdate: int64(input.forceUpdate),
    healthCheck: input.healthCheckCluster ? healthCheckToWire(input.healthCheckCluster) : undefined,
    restartPolicy: input.restartPolicyCluster ? restartPolicyToWire(input.restartPolicyCluster) : undefined,
    placement: input.placementCluster ? placementToWire(input.placementCluster) : undefined,
    updateConfig: input.updateConfigCluster ? rolloutToWire(input.updateConfigCluster) : undefined,
    rollbackConfig: input.rollbackConfigCluster ? rolloutToWire(input.rollbackConfigCluster) : undefined,
    mode: input.modeCluster ? modeToWire(input.modeCluster) : undefined,
    labels: input.labelsCluster ?? {},
    networkAttachments: (input.networkCluster ?? []).map((n) => ({ target: n.Target, aliases: n.Aliases ?? [], driverOpts: n.DriverOpts ?? {} })),
    stopGracePeriod: int64(input.stopGracePeriodCluster),
    endpointSpec: input.endpointSpecCluster ? endpointToWire(input.endpointSpecCluster) : undefined,
    ulimits: (input.ulimitsCluster ?? []).map((u) => ({ name: u.Name, soft: String(u.Soft), hard: String(u.Hard) })),
  };
}

export function workloadSpecFromWire(spec: WorkloadSpec, identity: WorkloadIdentity): WorkloadSpecInput {
  const blankIsNull = (text: string) => (text.trim() === '' ? null : text);
  return defined({
    ...identity,
    command: blankIsNull(spec.command),
    args: spec.args.length > 0 ? spec.args : null,
    replicas: spec.replicas,
    memoryLimit: blankIsNull(spec.memoryLimit),
    memoryReservation: blankIsNull(spec.memoryReservation),
    cpuLimit: blankIsNull(spec.cpuLimit),
    cpuReservation: blankIsNull(spec.cpuReservation),
    platformNetwork: spec.platformNetwork,
    detachPlatformNetwork: spec.detachPlatformNetwork || undefined,
    networks: listOrAbsent(spec.networks),
    ports: listOrAbsent(spec.ports.map(portFromWire)),
    volumes: listOrAbsent(spec.volumes.map((v): VolumeInput => defined({ source: v.source, target: v.target, readOnly: v.readOnly || undefined }))),
    binds: listOrAbsent(spec.binds.map((v): VolumeInput => defined({ source: v.source, target: v.target, readOnly: v.readOnly || undefined }))),
    forceUpdate: number(spec.forceUpdate),
    healthCheckCluster: spec.healthCheck && healthCheckFromWire(spec.healthCheck),
    restartPolicyCluster: spec.restartPolicy && restartPolicyFromWire(spec.restartPolicy),
    placementCluster: spec.placement && placementFromWire(spec.placement),
    updateConfigCluster: spec.updateConfig && (rolloutFromWire(spec.updateConfig) as UpdateConfigSpec),
    rollbackConfigCluster: spec.rollbackConfig && (rolloutFromWire(spec.rollbackConfig) as RollbackConfigSpec),
    modeCluster: spec.mode && modeFromWire(spec.mode),
    labelsCluster: mapOrAbsent(spec.labels),
    networkCluster: listOrAbsent(spec.networkAttachments.map(networkFromWire)),
    stopGracePeriodCluster: number(spec.stopGracePeriod),
    endpointSpecCluster: spec.endpointSpec && endpointFromWire(spec.endpointSpec),
    ulimitsCluster: listOrAbsent(spec.ulimits.map((u) => ({ Name: u.name, Soft: Number(u.soft), Hard: Number(u.hard) }))),
  });
}

function portToWire(p: PortConfig): WirePortConfig {
  return { protocol: p.Protocol ?? '', targetPort: p.TargetPort, publishedPort: p.PublishedPort, publishMode: p.PublishMode ?? '', name: p.Name ?? '' };
}

function portFromWire(p: WirePortConfig): PortConfig {
  return defined({
    Protocol: (p.protocol || undefined) as PortConfig['Protocol'],
    TargetPort: p.targetPort,
    PublishedPort: p.publishedPort,
    PublishMode: (p.publishMode || undefined) as PortConfig['PublishMode'],
    Name: p.name || undefined,
  });
}

function healthCheckToWire(h: HealthCheckConfig): WireHealthCheck {
  return {
    test: h.Test,
    interval: int64(h.Interval),
    timeout: int64(h.Timeout),
    startPeriod: int64(h.StartPeriod),
    startInterval: int64(h.StartInterval),
    retries: int64(h.Retries),
  };
}

function healthCheckFromWire(h: WireHealthCheck): HealthCheckConfig {
  return defined({
    Test: h.test,
    Interval: number(h.interval),
    Timeout: number(h.timeout),
    StartPeriod: number(h.startPeriod),
    StartInterval: number(h.startInterval),
    Retries: number(h.retries),
  });
}

function restartPolicyToWire(r: RestartPolicyConfig): WireRestartPolicy {
  return { condition: r.Condition ?? '', delay: int64(r.Delay), maxAttempts: int64(r.MaxAttempts), window: int64(r.Window) };
}

function restartPolicyFromWire(r: WireRestartPolicy): RestartPolicyConfig {
  return defined({
    Condition: (r.condition || undefined) as RestartPolicyConfig['Condition'],
    Delay: number(r.delay),
    MaxAttempts: number(r.maxAttempts),
    Window: number(r.window),
  });
}

function placementToWire(p: PlacementConfig): WirePlacement {
  return {
    constraints: p.Constraints ?? [],
    spreadPreferences: (p.Preferences ?? []).map((pref) => pref.Spread.SpreadDescriptor),
    maxReplicas: int64(p.MaxReplicas),
    platforms: (p.Platforms ?? []).map((pl) => ({ architecture: pl.Architecture, os: pl.OS })),
  };
}

function placementFromWire(p: WirePlacement): PlacementConfig {
  return defined({
    Constraints: listOrAbsent(p.constraints),
    Preferences: listOrAbsent(p.spreadPreferences.map((SpreadDescriptor) => ({ Spread: { SpreadDescriptor } }))),
    MaxReplicas: number(p.maxReplicas),
    Platforms: listOrAbsent(p.platforms.map((pl) => defined({ Architecture: pl.architecture, OS: pl.os }))),
  });
}

function rolloutToWire(u: UpdateConfigSpec | RollbackConfigSpec): WireUpdateConfig {
  return {
    parallelism: int64(u.Parallelism),
    delay: int64(u.Delay),
    monitor: int64(u.Monitor),
    maxFailureRatio: u.MaxFailureRatio,
    order: u.Order,
    failureAction: u.FailureAction,
  };
}

function rolloutFromWire(u: WireUpdateConfig): UpdateConfigSpec | RollbackConfigSpec {
  return defined({
    Parallelism: number(u.parallelism),
    Delay: number(u.delay),
    Monitor: number(u.monitor),
    MaxFailureRatio: u.maxFailureRatio,
    Order: u.order as UpdateConfigSpec['Order'],
    FailureAction: u.failureAction as UpdateConfigSpec['FailureAction'],
  }) as UpdateConfigSpec;
}

function modeToWire(m: ServiceMode): WireServiceMode {
  if ('Replicated' in m) return { mode: { $case: 'replicated', value: { replicas: int64(m.Replicated.Replicas) } } };
  if ('Global' in m) return { mode: { $case: 'global', value: {} } };
  if ('ReplicatedJob' in m) {
    const job = m.ReplicatedJob;
    return { mode: { $case: 'replicatedJob', value: { maxConcurrent: int64(job.MaxConcurrent), totalCompletions: int64(job.TotalCompletions) } } };
  }
  return { mode: { $case: 'globalJob', value: {} } };
}

function modeFromWire(m: WireServiceMode): ServiceMode | undefined {
  switch (m.mode?.$case) {
    case 'replicated':
      return { Replicated: defined({ Replicas: number(m.mode.value.replicas) }) };
    case 'global':
      return { Global: {} };
    case 'replicatedJob':
      return { ReplicatedJob: defined({ MaxConcurrent: number(m.mode.value.maxConcurrent), TotalCompletions: number(m.mode.value.totalCompletions) }) };
    case 'globalJob':
      return { GlobalJob: {} };
    default:
      return undefined;
  }
}

function networkFromWire(n: WireNetworkAttachment): NetworkAttachment {
  return defined({ Target: n.target, Aliases: listOrAbsent(n.aliases), DriverOpts: mapOrAbsent(n.driverOpts) });
}

function endpointToWire(e: EndpointSpecConfig): WireEndpointSpec {
  return { mode: e.Mode ?? '', ports: (e.Ports ?? []).map(portToWire) };
}

function endpointFromWire(e: WireEndpointSpec): EndpointSpecConfig {
  return defined({ Mode: (e.mode || undefined) as EndpointSpecConfig['Mode'], Ports: listOrAbsent(e.ports.map(portFromWire)) });
}
