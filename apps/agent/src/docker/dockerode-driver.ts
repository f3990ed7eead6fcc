/**
 * The Docker port implemented with dockerode against the Engine API. No API version is
 * pinned: requests go to the unversioned paths, which the engine serves at its own version
 * (1.41 for Engine 20.10), so the driver works with the engine it finds.
 *
 * Nothing here builds a command line: every call is an Engine API request, and every name
 * that goes into a request path is checked against Docker's grammar first.
 */
import Dockerode from 'dockerode';
import { parseImageReference } from '@skiff/domain';
import {
  MANAGED_LABEL,
  type ContainerInfo,
  type ContainerSpec,
  type ContainerState,
  type VolumeInfo,
  type CreateOrUpdateOptions,
  type PullOptions,
  type DockerDriver,
  type NetworkInfo,
  type ServiceChange,
  type ServiceChangeResult,
  type ServiceInfo,
  type ServiceSpec,
  type ServiceWriteResult,
  type SwarmInfo,
  type TaskInfo,
  type TaskState,
} from './driver.js';
import {
  DockerConflictError,
  DockerError,
  DockerInvalidError,
  DockerNotFoundError,
  DockerSwarmError,
  toDockerError,
} from './errors.js';
import { engineReasonOf, pullFailure } from './pull-progress.js';

export interface DockerodeDriverOptions {
  /** A configured client; otherwise one is made for `socketPath`. */
  docker?: Dockerode;
  /** Default `/var/run/docker.sock`. */
  socketPath?: string;
  /** Idle timeout of one Engine API request, for a client made here. Default 60 s. */
  requestTimeoutMs?: number;
  /** Used when the driver initialises a swarm. Defaults: `0.0.0.0:2377`, advertise address chosen by the engine. */
  swarm?: { listenAddr?: string; advertiseAddr?: string };
}

/** Swarm object names: a DNS label (swarmkit's rule for service names). */
const SERVICE_NAME_RE = /^[a-zA-Z0-9](?:[-_]*[a-zA-Z0-9]+)*$/;
const SERVICE_NAME_MAX = 63;
/** Docker network names. */
const NETWORK_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** Container and volume names (the engine's own rule). */
const OBJECT_NAME_RE = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;
/** Longest image pull when the caller sets no limit. */
const PULL_TIMEOUT_MS = 10 * 60_000;
/** Updates retried when another writer changed the service in between. */
const WRITE_ATTEMPTS = 4;

/**
 * dockerode's calls that take registry credentials as a first argument, as they run
 * (their published types list only the one-argument forms).
 */
interface WithAuth {
  createService(auth: unknown, spec: unknown): Promise<unknown>;
  createImage(auth: unknown, options: { _query: Record<string, string>; abortSignal?: AbortSignal }): Promise<unknown>;
}
interface ServiceWithAuth {
  update(auth: unknown, options: { _query: { version: number | undefined; rollback?: 'previous' }; _body: unknown }): Promise<unknown>;
}

interface EngineServiceObject {
  ID: string;
  Version?: { Index?: number };
  CreatedAt?: string;
  UpdatedAt?: string;
  Spec?: {
    Name?: string;
    Labels?: Record<string, string>;
    TaskTemplate?: { ContainerSpec?: { Image?: string } };
    Mode?: { Replicated?: { Replicas?: number } };
  };
  UpdateStatus?: { State?: string; Message?: string };
  /** The spec before the last update; absent on a service never updated. */
  PreviousSpec?: unknown;
}

interface EngineTask {
  ID: string;
  ServiceID?: string;
  CreatedAt?: string;
  UpdatedAt?: string;
  Slot?: number;
  NodeID?: string;
  DesiredState?: string;
  Spec?: { ContainerSpec?: { Image?: string; Labels?: Record<string, string> }; ForceUpdate?: number };
  Status?: {
    State?: string;
    Message?: string;
    Err?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
  };
}

interface EngineNetwork {
  Id: string;
  Name: string;
  Driver?: string;
  Scope?: string;
  Attachable?: boolean;
}

export function checkServiceName(name: string, operation: string): void {
  if (typeof name !== 'string' || name.length > SERVICE_NAME_MAX || !SERVICE_NAME_RE.test(name)) {
    throw new DockerInvalidError(
      operation,
      `invalid service name ${JSON.stringify(name)}: letters, digits, '-' and '_', starting and ending with a letter or digit, at most ${SERVICE_NAME_MAX} characters`,
    );
  }
}

function checkNetworkName(name: string, operation: string): void {
  if (typeof name !== 'string' || !NETWORK_NAME_RE.test(name)) {
    throw new DockerInvalidError(
      operation,
      `invalid network name ${JSON.stringify(name)}: letters, digits, '.', '-' and '_', starting with a letter or digit`,
    );
  }
}

function checkObjectName(kind: 'container' | 'volume', name: string, operation: string): void {
  if (typeof name !== 'string' || !OBJECT_NAME_RE.test(name)) {
    throw new DockerInvalidError(
      operation,
      `invalid ${kind} name ${JSON.stringify(name)}: letters, digits, '.', '-' and '_', starting with a letter or digit`,
    );
  }
}

interface EngineContainer {
  Id: string;
  Name?: string;
  Config?: { Image?: string; Labels?: Record<string, string> | null; Env?: string[] | null };
  State?: { Status?: string; ExitCode?: number; StartedAt?: string; FinishedAt?: string };
}

function toContainerInfo(c: EngineContainer): ContainerInfo {
  const state = c.State ?? {};
  return {
    id: c.Id,
    name: (c.Name ?? '').replace(/^\//, ''),
    image: c.Config?.Image ?? '',
    labels: c.Config?.Labels ?? {},
    state: (state.Status ?? 'dead') as ContainerState,
    exitCode: typeof state.ExitCode === 'number' ? state.ExitCode : null,
    startedAt: state.StartedAt ?? '',
    finishedAt: state.FinishedAt ?? '',
    env: c.Config?.Env ?? [],
  };
}

function checkImageRef(ref: string, operation: string): void {
  if (typeof ref !== 'string' || parseImageReference(ref) === null) {
    throw new DockerInvalidError(operation, `invalid image reference ${JSON.stringify(ref)}`);
  }
}

function labelFilters(labels: Record<string, string>, operation: string): string[] {
  return Object.entries(labels).map(([key, value]) => {
    if (key === '' || key.includes('=') || typeof value !== 'string') {
      throw new DockerInvalidError(operation, `invalid label filter ${JSON.stringify(key)}`);
    }
    return `${key}=${value}`;
  });
}

function isManaged(labels: Record<string, string> | undefined): boolean {
  return labels?.[MANAGED_LABEL] === 'true';
}

/** The engine answers a write based on a stale version with a 500 naming it. */
function isOutOfSequence(err: DockerError): boolean {
  return /out of sequence/i.test(err.engineMessage);
}

/** The engine's RFC 3339 times drop trailing zeros of the fraction: pad it so strings sort. */
function sortableTime(time: string): string {
  const m = /^([^.Z+]*)(?:\.(\d+))?(.*)$/.exec(time);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}${m[3]}` : time;
}

function toServiceInfo(s: EngineServiceObject): ServiceInfo {
  const spec = s.Spec ?? {};
  return {
    id: s.ID,
    name: spec.Name ?? '',
    version: s.Version?.Index ?? 0,
    labels: spec.Labels ?? {},
    image: spec.TaskTemplate?.ContainerSpec?.Image ?? '',
    replicas: spec.Mode?.Replicated ? (spec.Mode.Replicated.Replicas ?? 1) : null,
    updateState: s.UpdateStatus?.State ?? null,
    updateMessage: s.UpdateStatus?.Message ?? null,
    createdAt: s.CreatedAt ?? '',
    updatedAt: s.UpdatedAt ?? '',
  };
}

function toTaskInfo(t: EngineTask): TaskInfo {
  const status = t.Status ?? {};
  const container = status.ContainerStatus;
  return {
    id: t.ID,
    slot: typeof t.Slot === 'number' && t.Slot > 0 ? t.Slot : null,
    nodeId: t.NodeID || null,
    state: (status.State ?? 'new') as TaskState,
    desiredState: (t.DesiredState ?? 'new') as TaskState,
    message: status.Message ?? '',
    error: status.Err ? status.Err : null,
    exitCode: container && typeof container.ExitCode === 'number' && container.ExitCode >= 0 ? container.ExitCode : null,
    containerId: container?.ContainerID || null,
    image: t.Spec?.ContainerSpec?.Image ?? '',
    labels: t.Spec?.ContainerSpec?.Labels ?? {},
    forceUpdate: t.Spec?.ForceUpdate ?? 0,
    createdAt: t.CreatedAt ?? '',
    updatedAt: t.UpdatedAt ?? '',
  };
}

export class DockerodeDriver implements DockerDriver {
  private readonly docker: Dockerode;
  private readonly swarmOptions: { listenAddr: string; advertiseAddr?: string };

  constructor(options: DockerodeDriverOptions = {}) {
    this.docker =
      options.docker ??
      new Dockerode({
        socketPath: options.socketPath ?? '/var/run/docker.sock',
        timeout: options.requestTimeoutMs ?? 60_000,
      });
    this.swarmOptions = {
      listenAddr: options.swarm?.listenAddr ?? '0.0.0.0:2377',
      ...(options.swarm?.advertiseAddr ? { advertiseAddr: options.swarm.advertiseAddr } : {}),
    };
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw toDockerError(operation, err);
    }
  }

  async ensureSwarm(): Promise<SwarmInfo> {
    const operation = 'ensureSwarm';
    for (let attempt = 0; attempt < 2; attempt++) {
      const info = await this.call(operation, () => this.docker.info() as Promise<{ Swarm?: Record<string, unknown> }>);
      const swarm = info.Swarm ?? {};
      const state = String(swarm.LocalNodeState ?? 'inactive');
      if (state === 'active') {
        if (swarm.ControlAvailable !== true) {
          throw new DockerSwarmError(operation, 'this engine is a worker of a swarm; the agent needs a swarm manager');
        }
        return { nodeId: String(swarm.NodeID ?? ''), created: false };
      }
      if (state !== 'inactive') {
        // pending, locked or error: leaving would destroy every service, so say so instead.
        throw new DockerSwarmError(operation, `the engine's swarm is ${state}; it needs an operator`);
      }
      try {
        const nodeId = await this.call(operation, () =>
          this.docker.swarmInit({
            ListenAddr: this.swarmOptions.listenAddr,
            ...(this.swarmOptions.advertiseAddr ? { AdvertiseAddr: this.swarmOptions.advertiseAddr } : {}),
          }) as Promise<unknown>,
        );
        return { nodeId: String(nodeId), created: true };
      } catch (err) {
        // Another caller initialised it in between: look again.
        if (attempt === 0 && err instanceof DockerSwarmError) continue;
        throw err;
      }
    }
    throw new DockerSwarmError(operation, 'the swarm did not become active');
  }

  private async findNetwork(name: string, operation: string): Promise<EngineNetwork | null> {
    const list = (await this.call(operation, () =>
      this.docker.listNetworks({ filters: { name: [name] } }),
    )) as unknown as EngineNetwork[];
    // The engine's name filter matches substrings: keep the exact name only.
    return list.find((n) => n.Name === name) ?? null;
  }

  async ensureNetwork(name: string): Promise<NetworkInfo> {
    const operation = `ensureNetwork ${name}`;
    checkNetworkName(name, operation);
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await this.findNetwork(name, operation);
      if (existing) {
        // A swarm network the managers are still allocating reports an empty driver for a
        // moment after its creation: only a different driver or scope is a conflict.
        if ((existing.Driver !== 'overlay' && existing.Driver !== '') || existing.Scope !== 'swarm') {
          throw new DockerConflictError(
            operation,
            `network ${name} exists with driver ${existing.Driver ?? '?'} (scope ${existing.Scope ?? '?'}); an overlay network is needed`,
          );
        }
        if (existing.Attachable !== true) {
          throw new DockerConflictError(operation, `network ${name} exists but is not attachable`);
        }
        return { id: existing.Id, name, created: false };
      }
      try {
        const network = await this.call(operation, () =>
          this.docker.createNetwork({
            // The body only; an empty query keeps it out of the URL.
            _query: {},
            _body: {
              Name: name,
              Driver: 'overlay',
              Attachable: true,
              CheckDuplicate: true,
              Labels: { [MANAGED_LABEL]: 'true' },
            },
          } as unknown as Dockerode.NetworkCreateOptions),
        );
        return { id: network.id, name, created: true };
      } catch (err) {
        if (attempt === 0 && err instanceof DockerConflictError) continue;
        throw err;
      }
    }
    throw new DockerConflictError(operation, `network ${name} could not be created`);
  }

  /** The service, or null when there is none. */
  private async inspectService(name: string, operation: string): Promise<EngineServiceObject | null> {
    try {
      return (await this.call(operation, () =>
        this.docker.getService(encodeURIComponent(name)).inspect(),
      )) as EngineServiceObject;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return null;
      throw err;
    }
  }

  async createOrUpdateService(spec: ServiceSpec, options: CreateOrUpdateOptions = {}): Promise<ServiceWriteResult> {
    const name = spec?.Name;
    const operation = `createOrUpdateService ${String(name)}`;
    checkServiceName(name, operation);
    if (!isManaged(spec.Labels)) {
      throw new DockerInvalidError(operation, `the service spec must carry the label ${MANAGED_LABEL}=true`);
    }
    checkImageRef(spec.TaskTemplate?.ContainerSpec?.Image, operation);
    const auth = options.registryAuth
      ? {
          username: options.registryAuth.username,
          password: options.registryAuth.password,
          serveraddress: options.registryAuth.serveraddress,
        }
      : undefined;

    let lastError: DockerError | null = null;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await this.inspectService(name, operation);
      let created: boolean;
      let warnings: string[] = [];
      try {
        if (!current) {
          await this.call(operation, () =>
            (this.docker as unknown as WithAuth).createService(auth, structuredClone(spec)),
          );
          created = true;
        } else {
          if (!isManaged(current.Spec?.Labels)) {
            throw new DockerConflictError(operation, `service ${name} exists and is not managed by Skiff`);
          }
          const version = current.Version?.Index;
          const answer = (await this.call(operation, () =>
            (this.docker.getService(current.ID) as unknown as ServiceWithAuth).update(auth, {
              // The version in the query, the spec in the body only (it may carry secrets
              // in its env: never in a URL).
              _query: { version },
              _body: spec,
            }),
          )) as { Warnings?: string[] | null } | undefined;
          warnings = answer?.Warnings ?? [];
          created = false;
        }
      } catch (err) {
        const e = toDockerError(operation, err);
        // Created by someone else in between, or updated from a stale version: look again.
        if ((e instanceof DockerConflictError && !current) || isOutOfSequence(e)) {
          lastError = e;
          continue;
        }
        throw e;
      }
      const after = await this.inspectService(name, operation);
      if (!after) throw new DockerError(operation, `service ${name} disappeared right after it was written`);
      return { ...toServiceInfo(after), created, warnings };
    }
    throw lastError ?? new DockerError(operation, 'gave up after concurrent changes');
  }

  async updateService(name: string, change: ServiceChange): Promise<ServiceChangeResult | null> {
    const operation = `updateService ${String(name)}`;
    checkServiceName(name, operation);
    let lastError: DockerError | null = null;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await this.inspectService(name, operation);
      if (!current) return null;
      if (!isManaged(current.Spec?.Labels)) {
        throw new DockerConflictError(operation, `service ${name} is not managed by Skiff`);
      }
      const info = toServiceInfo(current);
      // The engine's whole spec, as `docker service update` reads and writes it back.
      const next = change(structuredClone(current.Spec) as ServiceSpec, info);
      if (next === null) return { ...info, changed: false, warnings: [] };
      if (next.Name !== name || !isManaged(next.Labels)) {
        throw new DockerInvalidError(operation, `the new spec must keep the name ${name} and the label ${MANAGED_LABEL}=true`);
      }
      let warnings: string[];
      try {
        const answer = (await this.call(operation, () =>
          // No credentials: the engine keeps those of the service's last write.
          (this.docker.getService(current.ID) as unknown as ServiceWithAuth).update(undefined, {
            _query: { version: info.version },
            _body: next,
          }),
        )) as { Warnings?: string[] | null } | undefined;
        warnings = answer?.Warnings ?? [];
      } catch (err) {
        const e = toDockerError(operation, err);
        if (isOutOfSequence(e)) {
          lastError = e;
          continue;
        }
        throw e;
      }
      const after = await this.inspectService(name, operation);
      if (!after) throw new DockerError(operation, `service ${name} disappeared right after it was written`);
      return { ...toServiceInfo(after), changed: true, warnings };
    }
    throw lastError ?? new DockerError(operation, 'gave up after concurrent changes');
  }

  async rollbackService(name: string): Promise<'rolled-back' | 'no-previous-version' | 'missing'> {
    const operation = `rollbackService ${String(name)}`;
    checkServiceName(name, operation);
    let lastError: DockerError | null = null;
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const current = await this.inspectService(name, operation);
      if (!current) return 'missing';
      if (!isManaged(current.Spec?.Labels)) {
        throw new DockerConflictError(operation, `service ${name} is not managed by Skiff`);
      }
      if (!current.PreviousSpec) return 'no-previous-version';
      try {
        await this.call(operation, () =>
          // The engine takes the previous spec itself; the body is the current one, as the CLI sends it.
          (this.docker.getService(current.ID) as unknown as ServiceWithAuth).update(undefined, {
            _query: { version: current.Version?.Index, rollback: 'previous' },
            _body: current.Spec,
          }),
        );
        return 'rolled-back';
      } catch (err) {
        const e = toDockerError(operation, err);
        if (isOutOfSequence(e)) {
          lastError = e;
          continue;
        }
        throw e;
      }
    }
    throw lastError ?? new DockerError(operation, 'gave up after concurrent changes');
  }

  async removeService(name: string): Promise<boolean> {
    const operation = `removeService ${String(name)}`;
    checkServiceName(name, operation);
    const current = await this.inspectService(name, operation);
    if (!current) return false;
    if (!isManaged(current.Spec?.Labels)) {
      throw new DockerConflictError(operation, `service ${name} is not managed by Skiff`);
    }
    try {
      await this.call(operation, () => this.docker.getService(current.ID).remove());
      return true;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return false;
      throw err;
    }
  }

  async serviceTasks(name: string): Promise<TaskInfo[]> {
    const operation = `serviceTasks ${String(name)}`;
    checkServiceName(name, operation);
    const current = await this.inspectService(name, operation);
    if (!current) {
      throw new DockerNotFoundError(operation, `service ${name} not found`, 404);
    }
    // By id: the engine's `service` filter also matches other services by name prefix.
    const tasks = (await this.call(operation, () =>
      this.docker.listTasks({ filters: { service: [current.ID] } }),
    )) as EngineTask[];
    return tasks
      .filter((t) => t.ServiceID === undefined || t.ServiceID === current.ID)
      .map(toTaskInfo)
      .sort((a, b) => {
        const x = sortableTime(a.createdAt);
        const y = sortableTime(b.createdAt);
        return x < y ? 1 : x > y ? -1 : 0;
      });
  }

  async servicesByLabel(labels: Record<string, string>): Promise<ServiceInfo[]> {
    const operation = 'servicesByLabel';
    const label = labelFilters(labels, operation);
    const services = (await this.call(operation, () =>
      this.docker.listServices(label.length ? { filters: { label } } : {}),
    )) as unknown as EngineServiceObject[];
    return services.map(toServiceInfo).sort((a, b) => a.name.localeCompare(b.name));
  }

  async imageExists(ref: string): Promise<boolean> {
    const operation = `imageExists ${String(ref)}`;
    checkImageRef(ref, operation);
    try {
      await this.call(operation, () => this.docker.getImage(ref).inspect());
      return true;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return false;
      throw err;
    }
  }

  async pullImage(ref: string, options: PullOptions = {}): Promise<void> {
    const operation = `pullImage ${String(ref)}`;
    checkImageRef(ref, operation);
    const parsed = parseImageReference(ref)!;
    // The name and the tag (or digest) apart: a name alone would pull every tag.
    const fromImage = parsed.host ? `${parsed.host}/${parsed.path}` : parsed.path;
    const tag = parsed.digest ?? parsed.tag ?? 'latest';
    const timeoutMs = options.timeoutMs ?? PULL_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const auth = options.registryAuth
      ? {
          username: options.registryAuth.username,
          password: options.registryAuth.password,
          serveraddress: options.registryAuth.serveraddress,
        }
      : undefined;
    let failure: string | null;
    try {
      // The query in `_query` alone: the credentials travel only in X-Registry-Auth.
      const stream = (await (this.docker as unknown as WithAuth).createImage(auth, {
        _query: { fromImage, tag },
        abortSignal: signal,
      })) as AsyncIterable<Buffer>;
      failure = await pullFailure(stream);
    } catch (err) {
      if (timeout.aborted && !options.signal?.aborted) {
        throw new DockerError(operation, `the pull did not finish within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`, null, { cause: err });
      }
      const e = toDockerError(operation, err);
      const reason = engineReasonOf(e.engineMessage);
      if (reason === e.engineMessage) throw e;
      const Kind = e.constructor as typeof DockerError;
      throw new Kind(operation, reason, e.statusCode, { cause: err });
    }
    if (failure !== null) throw new DockerError(operation, failure);
  }
  async containerByName(name: string): Promise<ContainerInfo | null> {
    const operation = `containerByName ${String(name)}`;
    checkObjectName('container', name, operation);
    try {
      return toContainerInfo(
        (await this.call(operation, () => this.docker.getContainer(name).inspect())) as unknown as EngineContainer,
      );
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return null;
      throw err;
    }
  }

  async createContainer(spec: ContainerSpec): Promise<ContainerInfo> {
    const name = spec?.Name;
    const operation = `createContainer ${String(name)}`;
    checkObjectName('container', name, operation);
    if (!isManaged(spec.Labels)) {
      throw new DockerInvalidError(operation, `the container spec must carry the label ${MANAGED_LABEL}=true`);
    }
    checkImageRef(spec.Image, operation);
    const { Name: _name, ...body } = spec;
    await this.call(operation, () =>
      // The name in the query, the rest in the body only (env values never go in a URL).
      this.docker.createContainer({ _query: { name }, _body: body } as unknown as Dockerode.ContainerCreateOptions),
    );
    const created = await this.containerByName(name);
    if (!created) throw new DockerError(operation, `container ${name} disappeared right after it was created`);
    return created;
  }

  /** The Skiff container `name`: a DockerNotFoundError when there is none, a DockerConflictError when it is not Skiff's. */
  private async managedContainer(name: string, operation: string): Promise<ContainerInfo | null> {
    const current = await this.containerByName(name);
    if (current && !isManaged(current.labels)) {
      throw new DockerConflictError(operation, `container ${name} is not managed by Skiff`);
    }
    return current;
  }

  async startContainer(name: string): Promise<void> {
    const operation = `startContainer ${String(name)}`;
    checkObjectName('container', name, operation);
    const current = await this.managedContainer(name, operation);
    if (!current) throw new DockerNotFoundError(operation, `container ${name} not found`, 404);
    try {
      await this.call(operation, () => this.docker.getContainer(current.id).start());
    } catch (err) {
      // 304: it runs already.
      if (err instanceof DockerError && err.statusCode === 304) return;
      throw err;
    }
  }

  async removeContainer(name: string): Promise<boolean> {
    const operation = `removeContainer ${String(name)}`;
    checkObjectName('container', name, operation);
    const current = await this.managedContainer(name, operation);
    if (!current) return false;
    try {
      await this.call(operation, () => this.docker.getContainer(current.id).remove({ force: true }));
      return true;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return false;
      throw err;
    }
  }

  async ensureVolume(name: string, labels: Record<string, string> = {}): Promise<VolumeInfo> {
    const operation = `ensureVolume ${String(name)}`;
    checkObjectName('volume', name, operation);
    try {
      await this.call(operation, () => this.docker.getVolume(name).inspect());
      return { name, created: false };
    } catch (err) {
      if (!(err instanceof DockerError && err.statusCode === 404)) throw err;
    }
    // The engine answers a create of an existing local volume with that volume.
    await this.call(operation, () =>
      this.docker.createVolume({
        _query: {},
        _body: { Name: name, Driver: 'local', Labels: { ...labels, [MANAGED_LABEL]: 'true' } },
      } as unknown as Dockerode.VolumeCreateOptions),
    );
    return { name, created: true };
  }

  async containersByLabel(labels: Record<string, string>): Promise<Array<{ id: string; state: ContainerState }>> {
    const operation = 'containersByLabel';
    const label = labelFilters(labels, operation);
    const listed = (await this.call(operation, () =>
      this.docker.listContainers({ all: true, ...(label.length ? { filters: { label } } : {}) }),
    )) as unknown as Array<{ Id: string; State?: string }>;
    return listed.map((c) => ({ id: c.Id, state: (c.State ?? 'dead') as ContainerState }));
  }

  async volumesByLabel(labels: Record<string, string>): Promise<string[]> {
    const operation = 'volumesByLabel';
    const label = labelFilters(labels, operation);
    const listed = (await this.call(operation, () =>
      this.docker.listVolumes(label.length ? { filters: { label } } : {}),
    )) as unknown as { Volumes?: Array<{ Name: string }> | null };
    return (listed.Volumes ?? []).map((v) => v.Name).sort();
  }

  async removeVolume(name: string): Promise<boolean> {
    const operation = `removeVolume ${String(name)}`;
    checkObjectName('volume', name, operation);
    let labels: Record<string, string> | undefined;
    try {
      const volume = (await this.call(operation, () => this.docker.getVolume(name).inspect())) as { Labels?: Record<string, string> | null };
      labels = volume.Labels ?? undefined;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return false;
      throw err;
    }
    if (!isManaged(labels)) throw new DockerConflictError(operation, `volume ${name} is not managed by Skiff`);
    try {
      // The engine answers 409 while a container (even a stopped one) uses the volume.
      await this.call(operation, () => this.docker.getVolume(name).remove());
      return true;
    } catch (err) {
      if (err instanceof DockerError && err.statusCode === 404) return false;
      throw err;
    }
  }
}
