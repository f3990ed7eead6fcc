/**
 * The Swarm objects of the server registry (deployments/server-registry.ts) that the rest of
 * the driver never removes: its secrets (listed by label), its overlay network, and the
 * volumes and services it runs with. Only objects labelled `skiff.managed=true` are removed.
 * Every remove answers false when there was nothing to remove.
 */
import type Dockerode from 'dockerode';
import { checkNetworkName, checkObjectName, checkServiceName, engineCall, isManaged, isNotFound, labelFilters } from './engine.js';
import { DockerConflictError } from './errors.js';

export interface RegistryObjects {
  /** Names of the Swarm secrets carrying every given label. */
  secretNames(labels: Record<string, string>): Promise<string[]>;
  removeSecret(name: string): Promise<boolean>;
  removeService(name: string): Promise<boolean>;
  removeNetwork(name: string): Promise<boolean>;
  /** A DockerConflictError while a container still uses it. */
  removeVolume(name: string): Promise<boolean>;
}

interface Labelled {
  ID?: string;
  Id?: string;
  Name?: string;
  Spec?: { Name?: string; Labels?: Record<string, string> };
  Labels?: Record<string, string>;
}

export class DockerodeRegistryObjects implements RegistryObjects {
  constructor(private readonly docker: Dockerode) {}

  async secretNames(labels: Record<string, string>): Promise<string[]> {
    const operation = 'secretNames';
    const list = (await engineCall(operation, () => this.docker.listSecrets({ filters: { label: labelFilters(labels, operation) } }))) as unknown as Labelled[];
    return list.map((s) => s.Spec?.Name ?? '').filter((n) => n !== '').sort();
  }

  removeSecret(name: string): Promise<boolean> {
    checkObjectName('secret', name, `removeSecret ${name}`);
    return this.remove(`removeSecret ${name}`, () => this.docker.getSecret(name).inspect(), (o) => o.Spec?.Labels, () => this.docker.getSecret(name).remove());
  }

  removeService(name: string): Promise<boolean> {
    checkServiceName(name, `removeService ${name}`);
    return this.remove(`removeService ${name}`, () => this.docker.getService(name).inspect(), (o) => o.Spec?.Labels, () => this.docker.getService(name).remove());
  }

  removeNetwork(name: string): Promise<boolean> {
    checkNetworkName(name, `removeNetwork ${name}`);
    return this.remove(`removeNetwork ${name}`, () => this.docker.getNetwork(name).inspect(), (o) => o.Labels, () => this.docker.getNetwork(name).remove());
  }

  removeVolume(name: string): Promise<boolean> {
    checkObjectName('volume', name, `removeVolume ${name}`);
    return this.remove(`removeVolume ${name}`, () => this.docker.getVolume(name).inspect(), (o) => o.Labels, () => this.docker.getVolume(name).remove());
  }

  private async remove(operation: string, inspect: () => Promise<unknown>, labelsOf: (o: Labelled) => Record<string, string> | undefined, remove: () => Promise<unknown>): Promise<boolean> {
    let found: Labelled;
    try {
      found = (await engineCall(operation, inspect)) as Labelled;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    if (!isManaged(labelsOf(found))) throw new DockerConflictError(operation, 'it is not managed by Skiff');
    try {
      await engineCall(operation, remove);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}
