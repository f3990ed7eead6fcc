/**
 * The swarm and its services, through dockerode: the swarm made sure of, services written
 * (created, updated, rolled back, removed) and read (by label, their tasks). Writes are
 * retried when another writer changed the service in between; only Skiff's services
 * (`skiff.managed=true`) are written or removed.
 */
import type Dockerode from 'dockerode';
import {
  MANAGED_LABEL,
  type CreateOrUpdateOptions,
  type ServiceChange,
  type ServiceChangeResult,
  type ServiceInfo,
  type ServiceSpec,
  type ServiceWriteResult,
  type SwarmInfo,
  type TaskInfo,
  type TaskState,
} from './driver.js';
import { checkImageRef, checkServiceName, engineCall, isManaged, isNotFound, labelFilters } from './engine.js';
import { DockerConflictError, DockerError, DockerInvalidError, DockerNotFoundError, DockerSwarmError, toDockerError } from './errors.js';
import { engineAuthOf, type DockerodeWithAuth, type ServiceWithAuth } from './registry-auth.js';

/** Used when the driver initialises a swarm. */
export interface SwarmInitOptions {
  listenAddr: string;
  advertiseAddr?: string;
}

/** Updates retried when another writer changed the service in between. */
const WRITE_ATTEMPTS = 4;

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

/** The engine answers a write based on a stale version with a 500 naming it. */
function isOutOfSequence(err: DockerError): boolean {
  return /out of sequence/i.test(err.engineMessage);
}

/** A write that raced another writer (it changed the service in between): tried again. */
class WriteRaced extends Error {
  constructor(readonly error: DockerError) {
    super(error.message);
  }
}

/**
 * One write of a service: what the engine refused becomes a DockerError, or a WriteRaced
 * when `raced` says another writer got in between (by default: a stale version).
 */
async function serviceWrite<T>(operation: string, write: () => Promise<T>, raced: (err: DockerError) => boolean = isOutOfSequence): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const e = toDockerError(operation, err);
    throw raced(e) ? new WriteRaced(e) : e;
  }
}

/** Runs `attempt` (which reads the service afresh) again after a raced write, WRITE_ATTEMPTS times at most. */
async function retryRaces<T>(operation: string, attempt: () => Promise<T>): Promise<T> {
  let lastError: DockerError | null = null;
  for (let i = 0; i < WRITE_ATTEMPTS; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof WriteRaced)) throw err;
      lastError = err.error;
    }
  }
  throw lastError ?? new DockerError(operation, 'gave up after concurrent changes');
}

/** The engine's RFC 3339 times drop trailing zeros of the fraction: pad it so strings sort. */
function sortableTime(time: string): string {
  const m = /^([^.Z+]*)(?:\.(\d+))?/.exec(time);
  return m ? `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}${time.slice(m[0].length)}` : time;
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
    previousImage: (s.PreviousSpec as { TaskTemplate?: { ContainerSpec?: { Image?: string } } } | undefined)?.TaskTemplate?.ContainerSpec?.Image ?? null,
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

export async function ensureSwarm(docker: Dockerode, options: SwarmInitOptions): Promise<SwarmInfo> {
  const operation = 'ensureSwarm';
  for (let attempt = 0; attempt < 2; attempt++) {
    const info = await engineCall(operation, () => docker.info() as Promise<{ Swarm?: Record<string, unknown> }>);
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
      const nodeId = await engineCall(operation, () =>
        docker.swarmInit({
          ListenAddr: options.listenAddr,
          ...(options.advertiseAddr ? { AdvertiseAddr: options.advertiseAddr } : {}),
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

/** The service, or null when there is none. */
async function inspectService(docker: Dockerode, name: string, operation: string): Promise<EngineServiceObject | null> {
  try {
    return (await engineCall(operation, () => docker.getService(encodeURIComponent(name)).inspect())) as EngineServiceObject;
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export async function createOrUpdateService(docker: Dockerode, spec: ServiceSpec, options: CreateOrUpdateOptions = {}): Promise<ServiceWriteResult> {
  const name = spec?.Name;
  const operation = `createOrUpdateService ${String(name)}`;
  checkServiceName(name, operation);
  if (!isManaged(spec.Labels)) {
    throw new DockerInvalidError(operation, `the service spec must carry the label ${MANAGED_LABEL}=true`);
  }
  checkImageRef(spec.TaskTemplate?.ContainerSpec?.Image, operation);
  const auth = engineAuthOf(options.registryAuth);

  return retryRaces(operation, async () => {
    const current = await inspectService(docker, name, operation);
    let created: boolean;
    let warnings: string[] = [];
    if (!current) {
      await serviceWrite(
        operation,
        () => (docker as unknown as DockerodeWithAuth).createService(auth, structuredClone(spec)),
        // Created by someone else in between: look again.
        (e) => e instanceof DockerConflictError || isOutOfSequence(e),
      );
      created = true;
    } else {
      if (!isManaged(current.Spec?.Labels)) {
        throw new DockerConflictError(operation, `service ${name} exists and is not managed by Skiff`);
      }
      const version = current.Version?.Index;
      const answer = (await serviceWrite(operation, () =>
        (docker.getService(current.ID) as unknown as ServiceWithAuth).update(auth, {
          // The version in the query, the spec in the body only (it may carry secrets
          // in its env: never in a URL).
          _query: { version },
          _body: spec,
        }),
      )) as { Warnings?: string[] | null } | undefined;
      warnings = answer?.Warnings ?? [];
      created = false;
    }
    const after = await inspectService(docker, name, operation);
    if (!after) throw new DockerError(operation, `service ${name} disappeared right after it was written`);
    return { ...toServiceInfo(after), created, warnings };
  });
}

export async function updateService(docker: Dockerode, name: string, change: ServiceChange): Promise<ServiceChangeResult | null> {
  const operation = `updateService ${String(name)}`;
  checkServiceName(name, operation);
  return retryRaces(operation, async () => {
    const current = await inspectService(docker, name, operation);
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
    const answer = (await serviceWrite(operation, () =>
      // No credentials: the engine keeps those of the service's last write.
      (docker.getService(current.ID) as unknown as ServiceWithAuth).update(undefined, {
        _query: { version: info.version },
        _body: next,
      }),
    )) as { Warnings?: string[] | null } | undefined;
    const after = await inspectService(docker, name, operation);
    if (!after) throw new DockerError(operation, `service ${name} disappeared right after it was written`);
    return { ...toServiceInfo(after), changed: true, warnings: answer?.Warnings ?? [] };
  });
}

export async function rollbackService(docker: Dockerode, name: string): Promise<'rolled-back' | 'no-previous-version' | 'missing'> {
  const operation = `rollbackService ${String(name)}`;
  checkServiceName(name, operation);
  return retryRaces(operation, async () => {
    const current = await inspectService(docker, name, operation);
    if (!current) return 'missing';
    if (!isManaged(current.Spec?.Labels)) {
      throw new DockerConflictError(operation, `service ${name} is not managed by Skiff`);
    }
    if (!current.PreviousSpec) return 'no-previous-version';
    await serviceWrite(operation, () =>
      // The engine takes the previous spec itself; the body is the current one, as the CLI sends it.
      (docker.getService(current.ID) as unknown as ServiceWithAuth).update(undefined, {
        _query: { version: current.Version?.Index, rollback: 'previous' },
        _body: current.Spec,
      }),
    );
    return 'rolled-back';
  });
}

export async function removeService(docker: Dockerode, name: string): Promise<boolean> {
  const operation = `removeService ${String(name)}`;
  checkServiceName(name, operation);
  const current = await inspectService(docker, name, operation);
  if (!current) return false;
  if (!isManaged(current.Spec?.Labels)) {
    throw new DockerConflictError(operation, `service ${name} is not managed by Skiff`);
  }
  try {
    await engineCall(operation, () => docker.getService(current.ID).remove());
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/** What reading a service's tasks needs of a client: dockerode's (dockerodeTaskReader), or the agent's light EngineSocket (lazy-driver.ts). */
export interface TaskReader {
  /** GET /services/<name or id>. */
  inspectService(name: string): Promise<unknown>;
  listTasks(options: { filters: { service: string[] } }): Promise<unknown>;
}

export const dockerodeTaskReader = (docker: Dockerode): TaskReader => ({
  inspectService: (name) => docker.getService(encodeURIComponent(name)).inspect(),
  listTasks: (options) => docker.listTasks(options),
});

export async function serviceTasks(docker: TaskReader, name: string): Promise<TaskInfo[]> {
  const operation = `serviceTasks ${String(name)}`;
  checkServiceName(name, operation);
  let current: EngineServiceObject;
  try {
    current = (await engineCall(operation, () => docker.inspectService(name))) as EngineServiceObject;
  } catch (err) {
    if (isNotFound(err)) throw new DockerNotFoundError(operation, `service ${name} not found`, 404);
    throw err;
  }
  // By id: the engine's `service` filter also matches other services by name prefix.
  const tasks = (await engineCall(operation, () => docker.listTasks({ filters: { service: [current.ID] } }))) as EngineTask[];
  return tasks
    .filter((t) => t.ServiceID === undefined || t.ServiceID === current.ID)
    .map(toTaskInfo)
    .sort((a, b) => {
      const x = sortableTime(a.createdAt);
      const y = sortableTime(b.createdAt);
      return x < y ? 1 : x > y ? -1 : 0;
    });
}

/** What listing needs of a client: dockerode's, or the agent's light EngineSocket (lazy-driver.ts). */
export interface ServiceLister {
  listServices(options: { filters?: { label: string[] } }): Promise<unknown>;
}

export async function servicesByLabel(docker: ServiceLister, labels: Record<string, string>): Promise<ServiceInfo[]> {
  const operation = 'servicesByLabel';
  const label = labelFilters(labels, operation);
  const services = (await engineCall(operation, () =>
    docker.listServices(label.length ? { filters: { label } } : {}),
  )) as unknown as EngineServiceObject[];
  // By code unit, not localeCompare: service names are ASCII, and collation would load ICU's
  // data (~3 MB resident) into an agent that lists its services at every start.
  return services.map(toServiceInfo).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
