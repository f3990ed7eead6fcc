/**
 * A built image is in the engine of the node that built it only. When the server's swarm has
 * more nodes, the others get it from the cluster registry (SKIFF_CLUSTER_REGISTRY): the image
 * is pushed there as `<registry>/<image>` and the service names it by the digest the
 * registry gave (`<registry>/<image>@sha256:…`), with the registry's login, so every node
 * pulls exactly what was built. Without one configured, the agent runs its own
 * (server-registry.ts); when that cannot start, the service is kept on this node (a
 * placement constraint), and the deployment log says why.
 */
import type { RegistryAuth, ServiceSpec } from '../docker/driver.js';
import type { NodeSummary, SwarmNodes } from '../docker/swarm-nodes.js';

export interface ClusterRegistry {
  /** `host[:port]` of the registry every node of the swarm can pull from. */
  address: string;
  username?: string;
  /** A secret: never logged. */
  password?: string;
  /** Where the nodes pull from when it is not `address` (the server registry's mirrors). */
  pullAddress?: string;
}

export interface ClusterImageDeps {
  nodes: Pick<SwarmNodes, 'list'>;
  push(source: string, target: string, options: { registryAuth?: RegistryAuth; signal?: AbortSignal; timeoutMs?: number }): Promise<string>;
  registry?: ClusterRegistry;
  /** The registry Skiff runs on the server, used when `registry` is not set. */
  serverRegistry?: { ensure(nodes: NodeSummary[], signal?: AbortSignal): Promise<ClusterRegistry> };
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
  let registry = deps.registry;
  let why = 'no cluster registry (SKIFF_CLUSTER_REGISTRY)';
  if (!registry && deps.serverRegistry) {
    registry = await deps.serverRegistry.ensure(nodes, options.signal).catch((err: unknown) => {
      why = `no cluster registry (SKIFF_CLUSTER_REGISTRY) and the server registry could not start (${err instanceof Error ? err.message : String(err)})`;
      return undefined;
    });
  }
  if (!registry) {
    const constraint = `node.id==${self?.id ?? ''}`;
    const placement = spec.TaskTemplate.Placement ?? {};
    return {
      spec: withTask(spec, { Placement: { ...placement, Constraints: [...(placement.Constraints ?? []), constraint] } }),
      lines: [
        `This server's swarm has ${nodes.length} nodes and ${why}: the image built here stays on this node (${self?.hostname ?? 'this node'}), and so does the service`,
      ],
    };
  }
  const { address, username, password } = registry;
  const pullAddress = registry.pullAddress ?? address;
  const authFor = (serveraddress: string) => (username ? { username, password: password ?? '', serveraddress } : undefined);
  const target = `${address}/${image}`;
  const digest = await pushRetried(deps, image, target, { registryAuth: authFor(address), ...options });
  const pinned = `${pullAddress}/${image}@${digest}`;
  const which = deps.registry ? 'the cluster registry' : "the server's own registry";
  return {
    spec: withTask(spec, { ContainerSpec: { ...spec.TaskTemplate.ContainerSpec, Image: pinned } }),
    registryAuth: authFor(pullAddress),
    lines: [`Pushed the image to ${which} for the ${nodes.length} nodes of this server's swarm: ${pinned}`],
  };
}

/** A registry whose task has just started may not listen yet: a refused push is tried again for a few seconds. */
async function pushRetried(deps: ClusterImageDeps, image: string, target: string, options: Parameters<ClusterImageDeps['push']>[2]): Promise<string> {
  const tries = deps.registry ? 1 : 5;
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.push(image, target, options);
    } catch (err) {
      if (attempt >= tries || options.signal?.aborted) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
    }
  }
}

function withTask(spec: ServiceSpec, change: Partial<ServiceSpec['TaskTemplate']>): ServiceSpec {
  return { ...spec, TaskTemplate: { ...spec.TaskTemplate, ...change } };
}
