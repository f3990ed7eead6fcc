import { CommandSplitError, splitCommand } from './argv.js';
import { isImageReference } from './image-ref.js';
import type {
  ClusterSettings,
  ContainerSpec,
  EndpointSpecConfig,
  NetworkAttachment,
  PortConfig,
  ResourceAmounts,
  RestartPolicyConfig,
  RollbackConfigSpec,
  ServiceMode,
  SwarmServiceSpec,
  TaskTemplate,
  UpdateConfigSpec,
  VolumeMount,
} from './swarm-types.js';

/**
 * The Swarm service spec of an application or a cache instance, built from what the
 * control plane stores for it. Pure: the same input always gives the same object, which
 * the agent hands to dockerode's `createService()` or `service.update()` unchanged (an
 * update replaces the whole spec, so a setting cleared here is cleared on the service).
 *
 * Rules (ARCHITECTURE.md, "Workloads on Docker"):
 * - Name = appName. Labels `skiff.managed=true`, `skiff.kind`, `skiff.id` on the service
 *   and its containers; `labelsCluster` adds service labels but nothing under `skiff.`
 *   (any case): that prefix is Skiff's, so user labels there are dropped.
 * - Networks: the platform network first (unless `detachPlatformNetwork`), then `networks`
 *   (a cache's networkIds), then `networkCluster`; one attachment per target, later
 *   entries adding aliases or driver options to an earlier one.
 * - EndpointSpec: mode `dnsrr` unless `endpointSpecCluster.Mode` says otherwise; ports are
 *   `ports` (a cache's externalPort) then `endpointSpecCluster.Ports`, each defaulting to
 *   protocol tcp and PublishMode host. An ingress-mode port with `dnsrr`, or one host port
 *   published twice, is refused here rather than by the engine.
 * - Mode: `modeCluster` when set (a Replicated mode without Replicas takes `replicas`);
 *   otherwise Replicated with `replicas`.
 * - UpdateConfig / RollbackConfig: defaults below (a 500 ms update monitor), overridden field by field by
 *   `updateConfigCluster` / `rollbackConfigCluster`. Order defaults to `start-first`, and to
 *   `stop-first` when two copies cannot run side by side (a volume, or a fixed host-mode
 *   port). Job modes get neither: the engine refuses an update config on a job.
 * - RestartPolicy: condition `any`, 5 s delay, overridden field by field.
 * - `command` is split into an argv without a shell (see argv.ts) and replaces the image's
 *   ENTRYPOINT (ContainerSpec.Command); `args` replace its CMD (ContainerSpec.Args).
 * - Memory and CPU are decimal strings of bytes and nano-CPUs; empty or "0" means none.
 * - `Init: true` always, so signals are forwarded and zombies reaped.
 * - Volumes are named volumes; the engine creates a missing one with the `skiff.*` labels,
 *   so the workload's volumes can be found (and removed with it) by label. Binds (host paths,
 *   absolute, no `..`) follow them; whether a workload may have any is decided before.
 */

export class SwarmSpecError extends Error {
  override name = 'SwarmSpecError';
}

export type SkiffKind = 'application' | 'compose' | 'cache' | 'proxy';

export const PLATFORM_NETWORK = 'skiff-network';
export const RESERVED_LABEL_PREFIX = 'skiff.';

export interface VolumeInput {
  /** A named volume. */
  source: string;
  /** An absolute path in the container. */
  target: string;
  readOnly?: boolean;
}

/** What the control plane stores for an application or a cache instance, env resolved. */
export interface WorkloadSpecInput extends ClusterSettings {
  appName: string;
  kind: 'application' | 'cache';
  /** The resource id (applicationId or cacheId): the `skiff.id` label. */
  id: string;
  image: string;
  /** Resolved environment, `KEY=VALUE` each (see resolveServiceEnv). */
  env: string[];
  command: string | null;
  args: string[] | null;
  replicas: number;
  /** Bytes, as a decimal string. */
  memoryLimit: string | null;
  memoryReservation: string | null;
  /** Nano-CPUs (1000000000 = one CPU), as a decimal string. */
  cpuLimit: string | null;
  cpuReservation: string | null;
  /** The overlay network every workload joins (normally PLATFORM_NETWORK). */
  platformNetwork: string;
  detachPlatformNetwork?: boolean | null;
  /** More networks to join, by name or id (a cache's networkIds). */
  networks?: string[] | null;
  /** Ports the workload itself publishes (a cache's externalPort). */
  ports?: PortConfig[] | null;
  volumes?: VolumeInput[] | null;
  /** Host paths mounted into the tasks (`source` absolute on the host). */
  binds?: VolumeInput[] | null;
  /** TaskTemplate.ForceUpdate: raise it to restart tasks whose spec did not change. */
  forceUpdate?: number | null;
}

const SECOND = 1_000_000_000;
/** The engine refuses memory limits below 6 MiB. */
const MIN_MEMORY_LIMIT = 6 * 1024 * 1024;

export const DEFAULT_RESTART_POLICY: Readonly<RestartPolicyConfig> = { Condition: 'any', Delay: 5 * SECOND };

type Order = 'start-first' | 'stop-first';

/**
 * How long a new task must run without failing before the engine counts its update done (and
 * would roll back otherwise). A deployment is done when this window has passed (see the
 * agent's deployments/rollout.ts), so it is short: a task that fails within it fails the
 * deployment; one that fails later is restarted by the restart policy.
 */
export const DEFAULT_UPDATE_MONITOR = SECOND / 2;

export function defaultUpdateConfig(order: Order): UpdateConfigSpec {
  return { Parallelism: 1, Order: order, FailureAction: 'rollback', Monitor: DEFAULT_UPDATE_MONITOR };
}

export function defaultRollbackConfig(order: Order): RollbackConfigSpec {
  return { Parallelism: 1, Order: order, FailureAction: 'pause', Monitor: 5 * SECOND };
}

export function skiffLabels(kind: SkiffKind, id: string): Record<string, string> {
  return { 'skiff.managed': 'true', 'skiff.kind': kind, 'skiff.id': id };
}

export function swarmServiceSpec(input: WorkloadSpecInput): SwarmServiceSpec {
  if (input.appName === '') throw new SwarmSpecError('appName is empty');
  if (input.id === '') throw new SwarmSpecError('id is empty');
  const mode = serviceMode(input);
  const endpoint = endpointSpec(input);
  return compact({
    Name: input.appName,
    Labels: serviceLabels(input),
    TaskTemplate: taskTemplate(input),
    Mode: mode,
    ...(isJob(mode) ? {} : rolloutConfigs(input, defaultOrder(input, endpoint))),
    EndpointSpec: endpoint,
  });
}

function serviceLabels(input: WorkloadSpecInput): Record<string, string> {
  const user = Object.entries(input.labelsCluster ?? {}).filter(
    ([key]) => !key.toLowerCase().startsWith(RESERVED_LABEL_PREFIX),
  );
  return { ...Object.fromEntries(user), ...skiffLabels(input.kind, input.id) };
}

function taskTemplate(input: WorkloadSpecInput): TaskTemplate {
  return compact({
    ContainerSpec: containerSpec(input),
    Resources: resources(input),
    RestartPolicy: { ...DEFAULT_RESTART_POLICY, ...plain(input.restartPolicyCluster ?? {}) },
    Placement: input.placementCluster ? plain(input.placementCluster) : undefined,
    Networks: networks(input),
    ForceUpdate: input.forceUpdate ?? undefined,
  });
}

function containerSpec(input: WorkloadSpecInput): ContainerSpec {
  return compact({
    Image: image(input.image),
    Labels: skiffLabels(input.kind, input.id),
    Command: command(input.command),
    Args: input.args && input.args.length > 0 ? [...input.args] : undefined,
    Env: envEntries(input.env),
    Mounts: mounts(input.volumes ?? [], input.binds ?? [], skiffLabels(input.kind, input.id)),
    HealthCheck: input.healthCheckCluster ? plain(input.healthCheckCluster) : undefined,
    StopGracePeriod: input.stopGracePeriodCluster ?? undefined,
    Ulimits: input.ulimitsCluster?.length ? plain(input.ulimitsCluster) : undefined,
    Init: true,
  });
}

function image(ref: string): string {
  if (!isImageReference(ref)) throw new SwarmSpecError(`"${ref}" is not a valid image reference`);
  return ref;
}

function command(text: string | null): string[] | undefined {
  if (text === null || text.trim() === '') return undefined;
  try {
    return splitCommand(text);
  } catch (error) {
    if (error instanceof CommandSplitError) throw new SwarmSpecError(error.message);
    throw error;
  }
}

/** Checks the shape only; values can be secrets and never appear in a message. */
function envEntries(env: string[]): string[] {
  env.forEach((entry, index) => {
    if (!/^[^=]+=/.test(entry)) throw new SwarmSpecError(`env entry ${index + 1} is not KEY=VALUE`);
  });
  return [...env];
}

/** Named volumes (one the engine creates for the mount carries the workload's labels), then binds. */
function mounts(volumes: VolumeInput[], binds: VolumeInput[], labels: Record<string, string>): VolumeMount[] | undefined {
  if (volumes.length === 0 && binds.length === 0) return undefined;
  return [...volumes.map((v) => volumeMount(v, labels)), ...binds.map(bindMount)];
}

function bindMount(b: VolumeInput): VolumeMount {
  if (!isCleanAbsolutePath(b.source)) throw new SwarmSpecError(`bind source "${b.source}" is not an absolute path without ".." segments`);
  if (!isCleanAbsolutePath(b.target)) throw new SwarmSpecError(`bind target "${b.target}" is not an absolute path without ".." segments`);
  return compact({ Type: 'bind' as const, Source: b.source, Target: b.target, ReadOnly: b.readOnly || undefined });
}

/** Absolute, and no segment is `..` (nor contains NUL or `:`, which the engine reads as a separator). */
function isCleanAbsolutePath(path: string): boolean {
  return path.startsWith('/') && !/[\0:]/.test(path) && !path.split('/').includes('..');
}

function volumeMount(v: VolumeInput, labels: Record<string, string>): VolumeMount {
  if (!/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(v.source)) {
    throw new SwarmSpecError(`"${v.source}" is not a valid volume name`);
  }
  if (!v.target.startsWith('/')) throw new SwarmSpecError(`volume target "${v.target}" is not an absolute path`);
  return compact({
    Type: 'volume' as const,
    Source: v.source,
    Target: v.target,
    ReadOnly: v.readOnly || undefined,
    VolumeOptions: { Labels: { ...labels } },
  });
}

function resources(input: WorkloadSpecInput): TaskTemplate['Resources'] {
  const limits = amounts(input.cpuLimit, input.memoryLimit, 'Limit');
  const memory = limits?.MemoryBytes;
  if (memory !== undefined && memory < MIN_MEMORY_LIMIT) {
    throw new SwarmSpecError(`memoryLimit must be at least ${MIN_MEMORY_LIMIT} bytes (6 MiB), got ${memory}`);
  }
  const reservations = amounts(input.cpuReservation, input.memoryReservation, 'Reservation');
  return nonEmpty(compact({ Limits: limits, Reservations: reservations }));
}

function amounts(cpu: string | null, memory: string | null, kind: string): ResourceAmounts | undefined {
  return nonEmpty(
    compact({
      NanoCPUs: wholeNumber(cpu, `cpu${kind}`, 'nano-CPUs'),
      MemoryBytes: wholeNumber(memory, `memory${kind}`, 'bytes'),
    }),
  );
}

/** A stored decimal string as a number; empty or zero means "not set". */
function wholeNumber(value: string | null, field: string, unit: string): number | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new SwarmSpecError(`${field} must be a whole number of ${unit}, got "${value}"`);
  }
  return n === 0 ? undefined : n;
}

function networks(input: WorkloadSpecInput): NetworkAttachment[] {
  if (!input.detachPlatformNetwork && input.platformNetwork === '') {
    throw new SwarmSpecError('platformNetwork is empty');
  }
  const platform = input.detachPlatformNetwork ? [] : [{ Target: input.platformNetwork }];
  const extra = (input.networks ?? []).map((Target) => ({ Target }));
  return mergeByTarget([...platform, ...extra, ...plain(input.networkCluster ?? [])]);
}

function mergeByTarget(list: NetworkAttachment[]): NetworkAttachment[] {
  const byTarget = new Map<string, NetworkAttachment>();
  for (const network of list) byTarget.set(network.Target, { ...byTarget.get(network.Target), ...network });
  return [...byTarget.values()];
}

function serviceMode(input: WorkloadSpecInput): ServiceMode {
  if (!Number.isInteger(input.replicas) || input.replicas < 0) {
    throw new SwarmSpecError(`replicas must be a whole number of at least 0, got ${input.replicas}`);
  }
  const mode = input.modeCluster;
  if (!mode) return { Replicated: { Replicas: input.replicas } };
  if ('Replicated' in mode) return { Replicated: { Replicas: mode.Replicated.Replicas ?? input.replicas } };
  return plain(mode);
}

function isJob(mode: ServiceMode): boolean {
  return 'ReplicatedJob' in mode || 'GlobalJob' in mode;
}

function endpointSpec(input: WorkloadSpecInput): EndpointSpecConfig {
  const cluster = input.endpointSpecCluster ?? {};
  const mode = cluster.Mode ?? 'dnsrr';
  const ports = [...(input.ports ?? []), ...(cluster.Ports ?? [])].map(withPortDefaults);
  checkPorts(ports, mode);
  return ports.length > 0 ? { Mode: mode, Ports: ports } : { Mode: mode };
}

function withPortDefaults(port: PortConfig): PortConfig {
  return compact({
    Name: port.Name,
    Protocol: port.Protocol ?? 'tcp',
    TargetPort: port.TargetPort,
    PublishedPort: port.PublishedPort,
    PublishMode: port.PublishMode ?? 'host',
  });
}

function checkPorts(ports: PortConfig[], mode: 'vip' | 'dnsrr'): void {
  if (mode === 'dnsrr' && ports.some((p) => p.PublishMode === 'ingress')) {
    throw new SwarmSpecError('A port published in ingress mode needs endpoint mode "vip"; "dnsrr" takes host-mode ports only');
  }
  const seen = new Set<string>();
  for (const port of ports.filter((p) => p.PublishedPort !== undefined)) {
    const key = `${port.PublishedPort}/${port.Protocol}`;
    if (seen.has(key)) throw new SwarmSpecError(`Port ${key} is published twice`);
    seen.add(key);
  }
}

/** start-first needs room for two copies at once: no volume, no fixed host-mode port. */
function defaultOrder(input: WorkloadSpecInput, endpoint: EndpointSpecConfig): Order {
  const hasVolume = (input.volumes ?? []).length > 0;
  const fixedHostPort = (endpoint.Ports ?? []).some((p) => p.PublishMode === 'host' && p.PublishedPort !== undefined);
  return hasVolume || fixedHostPort ? 'stop-first' : 'start-first';
}

function rolloutConfigs(
  input: WorkloadSpecInput,
  order: Order,
): { UpdateConfig: UpdateConfigSpec; RollbackConfig: RollbackConfigSpec } {
  return {
    UpdateConfig: { ...defaultUpdateConfig(order), ...plain(input.updateConfigCluster ?? {}) },
    RollbackConfig: { ...defaultRollbackConfig(order), ...plain(input.rollbackConfigCluster ?? {}) },
  };
}

/** A deep copy without undefined fields: the output never shares objects with the input. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The object without its undefined fields (so specs compare and serialise exactly). */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function nonEmpty<T extends object>(value: T | undefined): T | undefined {
  return value !== undefined && Object.keys(value).length > 0 ? value : undefined;
}
