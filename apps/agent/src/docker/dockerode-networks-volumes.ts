/**
 * Networks and volumes, through dockerode: the platform's attachable overlay networks made
 * sure of, and Skiff's volumes made, listed by label and removed. Only Skiff's volumes
 * (`skiff.managed=true`) are removed.
 */
import type Dockerode from 'dockerode';
import { MANAGED_LABEL, type NetworkInfo, type VolumeInfo } from './driver.js';
import { checkNetworkName, checkObjectName, engineCall, isManaged, isNotFound, labelFilters } from './engine.js';
import { DockerConflictError } from './errors.js';

interface EngineNetwork {
  Id: string;
  Name: string;
  Driver?: string;
  Scope?: string;
  Attachable?: boolean;
}

async function findNetwork(docker: Dockerode, name: string, operation: string): Promise<EngineNetwork | null> {
  const list = (await engineCall(operation, () => docker.listNetworks({ filters: { name: [name] } }))) as unknown as EngineNetwork[];
  // The engine's name filter matches substrings: keep the exact name only.
  return list.find((n) => n.Name === name) ?? null;
}

export async function ensureNetwork(docker: Dockerode, name: string): Promise<NetworkInfo> {
  const operation = `ensureNetwork ${name}`;
  checkNetworkName(name, operation);
  for (let attempt = 0; attempt < 2; attempt++) {
    const existing = await findNetwork(docker, name, operation);
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
      const network = await engineCall(operation, () =>
        docker.createNetwork({
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

export async function ensureVolume(docker: Dockerode, name: string, labels: Record<string, string> = {}): Promise<VolumeInfo> {
  const operation = `ensureVolume ${String(name)}`;
  checkObjectName('volume', name, operation);
  try {
    await engineCall(operation, () => docker.getVolume(name).inspect());
    return { name, created: false };
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  // The engine answers a create of an existing local volume with that volume.
  await engineCall(operation, () =>
    docker.createVolume({
      _query: {},
      _body: { Name: name, Driver: 'local', Labels: { ...labels, [MANAGED_LABEL]: 'true' } },
    } as unknown as Dockerode.VolumeCreateOptions),
  );
  return { name, created: true };
}

export async function volumesByLabel(docker: Dockerode, labels: Record<string, string>): Promise<string[]> {
  const operation = 'volumesByLabel';
  const label = labelFilters(labels, operation);
  const listed = (await engineCall(operation, () =>
    docker.listVolumes(label.length ? { filters: { label } } : {}),
  )) as unknown as { Volumes?: Array<{ Name: string }> | null };
  return (listed.Volumes ?? []).map((v) => v.Name).sort();
}

export async function removeVolume(docker: Dockerode, name: string): Promise<boolean> {
  const operation = `removeVolume ${String(name)}`;
  checkObjectName('volume', name, operation);
  let labels: Record<string, string> | undefined;
  try {
    const volume = (await engineCall(operation, () => docker.getVolume(name).inspect())) as { Labels?: Record<string, string> | null };
    labels = volume.Labels ?? undefined;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  if (!isManaged(labels)) throw new DockerConflictError(operation, `volume ${name} is not managed by Skiff`);
  try {
    // The engine answers 409 while a container (even a stopped one) uses the volume.
    await engineCall(operation, () => docker.getVolume(name).remove());
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}
