/**
 * A built image is in the engine of the node that built it only. When the server's swarm has
 * more nodes, the others get it from the cluster registry (SKIFF_CLUSTER_REGISTRY): the image
 * is pushed there as `<registry>/<image>` and the service names it by the digest the
 * registry gave (`<registry>/<image>@sha256:…`), with the registry's login, so every node
 * pulls exactly what was built. Without a registry the service is kept on this node (a
 * placement constraint), and the deployment log says why.
 */
import type { RegistryAuth, ServiceSpec } from '../docker/driver.js';
import type { SwarmNodes } from '../docker/swarm-nodes.js';

export interface ClusterRegistry {
  /** `host[:port]` of the registry every node of the swarm can pull from. */
  address: string;
  username?: string;
  /** A secret: never logged. */
  password?: string;
}

export interface ClusterImageDeps {
  nodes: Pick<SwarmNodes, 'list'>;
  push(source: string, target: string, options: { registryAuth?: RegistryAuth; signal?: AbortSignal; timeoutMs?: number }): Promise<string>;
  registry?: ClusterRegistry;
}

export interface SharedImage {
  /** The spec to write, its image (or placement) changed when the swarm has other nodes. */
  spec: ServiceSpec;
  /** The login the engine hands to the nodes for the pushed image; none when nothing was pushed or the registry takes no login. */
  registryAuth?: RegistryAuth;
  lines: string[];
}

export async function shareBuiltImage(
  deps: ClusterImageDeps,
  spec: ServiceSpec,
  image: string,
  options: { signal?: AbortSignal; timeoutMs?: number },
): Promise<SharedImage> {
  const nodes = await deps.nodes.list();
  if (nodes.length <= 1) return { spec, lines: [] };
  const self = nodes.find((n) => n.self);
  if (!deps.registry) {
    const constraint = `node.id==${self?.id ?? ''}`;
    const placement = spec.TaskTemplate.Placement ?? {};
    return {
      spec: withTask(spec, { Placement: { ...placement, Constraints: [...(placement.Constraints ?? []), constraint] } }),
      lines: [
        `This server's swarm has ${nodes.length} nodes and no cluster registry (SKIFF_CLUSTER_REGISTRY): the image built here stays on this node (${self?.hostname ?? 'this node'}), and so does the service`,
      ],
    };
  }
  const { address, username, password } = deps.registry;
  const registryAuth = username ? { username, password: password ?? '', serveraddress: address } : undefined;
  const target = `${address}/${image}`;
  const digest = await deps.push(image, target, { registryAuth, ...options });
  const pinned = `${target}@${digest}`;
  return {
    spec: withTask(spec, { ContainerSpec: { ...spec.TaskTemplate.ContainerSpec, Image: pinned } }),
    registryAuth,
    lines: [`Pushed the image to the cluster registry for the ${nodes.length} nodes of this server's swarm: ${pinned}`],
  };
}

function withTask(spec: ServiceSpec, change: Partial<ServiceSpec['TaskTemplate']>): ServiceSpec {
  return { ...spec, TaskTemplate: { ...spec.TaskTemplate, ...change } };
}
