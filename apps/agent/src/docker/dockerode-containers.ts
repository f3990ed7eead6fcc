/**
 * Plain containers (outside Swarm: the reverse proxy), through dockerode: found by name or
 * label, created, started and removed. Only Skiff's containers (`skiff.managed=true`) are
 * created, started or removed.
 */
import type Dockerode from 'dockerode';
import { MANAGED_LABEL, type ContainerInfo, type ContainerSpec, type ContainerState } from './driver.js';
import { checkImageRef, checkObjectName, engineCall, isManaged, isNotFound, labelFilters } from './engine.js';
import { DockerConflictError, DockerError, DockerInvalidError, DockerNotFoundError } from './errors.js';

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

export async function containerByName(docker: Dockerode, name: string): Promise<ContainerInfo | null> {
  const operation = `containerByName ${String(name)}`;
  checkObjectName('container', name, operation);
  try {
    return toContainerInfo((await engineCall(operation, () => docker.getContainer(name).inspect())) as unknown as EngineContainer);
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
}

export async function createContainer(docker: Dockerode, spec: ContainerSpec): Promise<ContainerInfo> {
  const name = spec?.Name;
  const operation = `createContainer ${String(name)}`;
  checkObjectName('container', name, operation);
  if (!isManaged(spec.Labels)) {
    throw new DockerInvalidError(operation, `the container spec must carry the label ${MANAGED_LABEL}=true`);
  }
  checkImageRef(spec.Image, operation);
  const { Name: _name, ...body } = spec;
  await engineCall(operation, () =>
    // The name in the query, the rest in the body only (env values never go in a URL).
    docker.createContainer({ _query: { name }, _body: body } as unknown as Dockerode.ContainerCreateOptions),
  );
  const created = await containerByName(docker, name);
  if (!created) throw new DockerError(operation, `container ${name} disappeared right after it was created`);
  return created;
}

/** The Skiff container `name`, or null when there is none; a DockerConflictError when it is not Skiff's. */
async function managedContainer(docker: Dockerode, name: string, operation: string): Promise<ContainerInfo | null> {
  const current = await containerByName(docker, name);
  if (current && !isManaged(current.labels)) {
    throw new DockerConflictError(operation, `container ${name} is not managed by Skiff`);
  }
  return current;
}

export async function startContainer(docker: Dockerode, name: string): Promise<void> {
  const operation = `startContainer ${String(name)}`;
  checkObjectName('container', name, operation);
  const current = await managedContainer(docker, name, operation);
  if (!current) throw new DockerNotFoundError(operation, `container ${name} not found`, 404);
  try {
    await engineCall(operation, () => docker.getContainer(current.id).start());
  } catch (err) {
    // 304: it runs already.
    if (err instanceof DockerError && err.statusCode === 304) return;
    throw err;
  }
}

export async function removeContainer(docker: Dockerode, name: string): Promise<boolean> {
  const operation = `removeContainer ${String(name)}`;
  checkObjectName('container', name, operation);
  const current = await managedContainer(docker, name, operation);
  if (!current) return false;
  try {
    await engineCall(operation, () => docker.getContainer(current.id).remove({ force: true }));
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

export async function containersByLabel(docker: Dockerode, labels: Record<string, string>): Promise<Array<{ id: string; state: ContainerState }>> {
  const operation = 'containersByLabel';
  const label = labelFilters(labels, operation);
  const listed = (await engineCall(operation, () =>
    docker.listContainers({ all: true, ...(label.length ? { filters: { label } } : {}) }),
  )) as unknown as Array<{ Id: string; State?: string }>;
  return listed.map((c) => ({ id: c.Id, state: (c.State ?? 'dead') as ContainerState }));
}
