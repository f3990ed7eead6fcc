/**
 * What the server registry (server-registry.ts) leaves behind, removed:
 *
 * - `pruneRegistrySecrets`: after each start, the registry's secrets other than the ones its
 *   services now use (a secret's name carries a hash of its content, so a changed login or
 *   configuration makes new ones and the old stay). One still in use is left for next time.
 * - `removeServerRegistry`: when the server is removed with `workloads: "remove"`, or its swarm
 *   is back to one node (a single machine never runs the registry): the three services, then,
 *   once their containers are gone, the overlay network, the secrets and the volumes on this
 *   node (the registry's data: only copies of images built here, which the services of a
 *   single machine run from its local images). The mirrors' volumes on nodes that left stay
 *   on those machines.
 */
import type { RegistryObjects } from '../docker/registry-objects.js';
import { MIRROR_SERVICE, MIRROR_VOLUME, READER_SERVICE, REGISTRY_NETWORK, REGISTRY_SERVICE, REGISTRY_VOLUME } from './server-registry.js';

export const REGISTRY_ROLE = { 'skiff.role': 'server-registry' };

export interface RegistryNames {
  services: string[];
  network: string;
  volumes: string[];
  /** Its secrets: the ones labelled with the registry's role whose name starts with this. */
  secretPrefix: string;
}

// A function: server-registry.ts imports this module, so its names are read at call time.
export const registryNames = (): RegistryNames => ({
  services: [REGISTRY_SERVICE, READER_SERVICE, MIRROR_SERVICE],
  network: REGISTRY_NETWORK,
  volumes: [REGISTRY_VOLUME, MIRROR_VOLUME],
  secretPrefix: 'skiff-registry-',
});

/** Removes the registry's secrets not in `keep`; answers the names removed. */
export async function pruneRegistrySecrets(objects: RegistryObjects, keep: readonly string[], names: RegistryNames = registryNames()): Promise<string[]> {
  const removed = [];
  for (const name of await objects.secretNames(REGISTRY_ROLE)) {
    if (!name.startsWith(names.secretPrefix) || keep.includes(name)) continue;
    // In use by a service that is still updating: the next start prunes it.
    if (await objects.removeSecret(name).catch(() => false)) removed.push(name);
  }
  return removed;
}

export interface RegistryRemoval {
  /** `service <name>`, `network <name>`, `secret <name>`, `volume <name>` of each object removed. */
  removed: string[];
  /** What could not be removed, with why. */
  problems: string[];
}

export async function removeServerRegistry(objects: RegistryObjects, options: { names?: RegistryNames; timeoutMs?: number } = {}): Promise<RegistryRemoval> {
  const names = options.names ?? registryNames();
  const result: RegistryRemoval = { removed: [], problems: [] };
  const attempt = async (what: string, remove: () => Promise<boolean>) => {
    try {
      if (await remove()) result.removed.push(what);
      return true;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  };
  for (const service of names.services) {
    const outcome = await attempt(`service ${service}`, () => objects.removeService(service));
    if (outcome !== true) result.problems.push(`service ${service}: ${outcome}`);
  }
  // The engine removes the services' containers a moment later: the network and the volumes
  // are refused while one still uses them.
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const pending = new Map<string, () => Promise<boolean>>([
    [`network ${names.network}`, () => objects.removeNetwork(names.network)],
    ...names.volumes.map((v) => [`volume ${v}`, () => objects.removeVolume(v)] as [string, () => Promise<boolean>]),
  ]);
  const last = new Map<string, string>();
  while (pending.size > 0) {
    for (const [what, remove] of pending) {
      const outcome = await attempt(what, remove);
      if (outcome === true) pending.delete(what);
      else last.set(what, outcome);
    }
    if (pending.size === 0 || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  for (const what of pending.keys()) result.problems.push(`${what}: ${last.get(what)}`);
  for (const secret of await objects.secretNames(REGISTRY_ROLE).catch(() => [])) {
    if (!secret.startsWith(names.secretPrefix)) continue;
    const outcome = await attempt(`secret ${secret}`, () => objects.removeSecret(secret));
    if (outcome !== true) result.problems.push(`secret ${secret}: ${outcome}`);
  }
  return result;
}
