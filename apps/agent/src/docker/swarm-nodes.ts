/**
 * The nodes of the swarm this engine manages (cluster.* operations), through the Engine API:
 * `GET /nodes`, `GET /swarm` (join tokens), `POST /nodes/{id}/update`, `DELETE /nodes/{id}`,
 * and the tasks placed on them. Node ids go into request paths only after checkNodeId.
 */
import type Dockerode from 'dockerode';
import { engineCall, isNotFound } from './engine.js';
import { DockerInvalidError, DockerSwarmError } from './errors.js';

export interface NodeSummary {
  id: string;
  hostname: string;
  role: string;
  availability: string;
  state: string;
  /** The node's address as the swarm sees it. */
  address: string;
  /** Managers: whether it leads the raft; workers: false. */
  leader: boolean;
  engineVersion: string;
  labels: Record<string, string>;
  /** Whether it is the node of this agent's engine. */
  self: boolean;
}

export interface NodeTask {
  id: string;
  serviceId: string;
  nodeId: string;
  state: string;
  desiredState: string;
}

export interface SkiffService {
  id: string;
  name: string;
  labels: Record<string, string>;
  image: string;
  /** Replicated: the wanted count; global: null. */
  replicas: number | null;
}

export interface SwarmNodes {
  list(): Promise<NodeSummary[]>;
  /** The engine's inspection of the node, or null when the swarm has none of that id. */
  inspect(nodeId: string): Promise<Record<string, unknown> | null>;
  /** This engine's node id; a DockerSwarmError when it manages no swarm. */
  selfId(): Promise<string>;
  joinTokens(): Promise<{ worker: string; manager: string }>;
  /** Where new nodes reach this manager (`host:port`). */
  managerAddress(): Promise<string>;
  update(nodeId: string, change: { availability?: 'active' | 'pause' | 'drain'; role?: 'worker' | 'manager' }): Promise<void>;
  remove(nodeId: string, force: boolean): Promise<void>;
  /** Tasks the swarm wants running (desired state running) on the node, or on every node. */
  runningTasks(nodeId?: string): Promise<NodeTask[]>;
  /** The services labelled `skiff.managed=true`. */
  skiffServices(): Promise<SkiffService[]>;
  /** The ids of the swarm's replicated services (whose tasks move when a node drains; global ones do not). */
  replicatedServiceIds(): Promise<Set<string>>;
}

const NODE_ID = /^[a-z0-9]{25}$/;

export function isNodeId(id: string): boolean {
  return NODE_ID.test(id);
}

function checkNodeId(id: string, operation: string): void {
  if (!isNodeId(id)) throw new DockerInvalidError(operation, 'a node id is 25 lowercase letters and digits');
}

interface EngineNode {
  ID: string;
  Version?: { Index?: number };
  Spec?: { Role?: string; Availability?: string; Labels?: Record<string, string>; Name?: string };
  Description?: { Hostname?: string; Engine?: { EngineVersion?: string } };
  Status?: { State?: string; Addr?: string };
  ManagerStatus?: { Leader?: boolean; Addr?: string };
}

export class DockerodeSwarmNodes implements SwarmNodes {
  constructor(private readonly docker: Dockerode) {}

  async list(): Promise<NodeSummary[]> {
    const [nodes, self] = await Promise.all([
      engineCall('listNodes', () => this.docker.listNodes() as Promise<EngineNode[]>),
      this.selfId(),
    ]);
    return nodes.map((n) => summary(n, self)).sort((a, b) => a.hostname.localeCompare(b.hostname) || a.id.localeCompare(b.id));
  }

  async inspect(nodeId: string): Promise<Record<string, unknown> | null> {
    const operation = `inspectNode ${nodeId}`;
    checkNodeId(nodeId, operation);
    try {
      return (await engineCall(operation, () => this.docker.getNode(nodeId).inspect())) as Record<string, unknown>;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async selfId(): Promise<string> {
    const info = (await engineCall('info', () => this.docker.info())) as { Swarm?: { NodeID?: string; LocalNodeState?: string; ControlAvailable?: boolean } };
    if (info.Swarm?.LocalNodeState !== 'active' || !info.Swarm.ControlAvailable || !info.Swarm.NodeID) {
      throw new DockerSwarmError('info', 'this engine is not a manager of an active swarm');
    }
    return info.Swarm.NodeID;
  }

  async joinTokens(): Promise<{ worker: string; manager: string }> {
    const swarm = (await engineCall('inspectSwarm', () => this.docker.swarmInspect())) as { JoinTokens?: { Worker?: string; Manager?: string } };
    const worker = swarm.JoinTokens?.Worker ?? '';
    const manager = swarm.JoinTokens?.Manager ?? '';
    if (!worker || !manager) throw new DockerSwarmError('inspectSwarm', 'the swarm gave no join tokens');
    return { worker, manager };
  }

  async managerAddress(): Promise<string> {
    const self = await this.selfId();
    const node = (await engineCall('inspectNode', () => this.docker.getNode(self).inspect())) as EngineNode;
    const address = node.ManagerStatus?.Addr;
    if (!address) throw new DockerSwarmError('inspectNode', 'this manager has no address in the swarm');
    return address;
  }

  async update(nodeId: string, change: { availability?: 'active' | 'pause' | 'drain'; role?: 'worker' | 'manager' }): Promise<void> {
    const operation = `updateNode ${nodeId}`;
    checkNodeId(nodeId, operation);
    const node = (await engineCall(operation, () => this.docker.getNode(nodeId).inspect())) as EngineNode;
    const spec = { ...node.Spec, ...(change.availability ? { Availability: change.availability } : {}), ...(change.role ? { Role: change.role } : {}) };
    await engineCall(operation, () => this.docker.getNode(nodeId).update({ _query: { version: node.Version?.Index }, _body: spec }) as Promise<unknown>);
  }

  async remove(nodeId: string, force: boolean): Promise<void> {
    const operation = `removeNode ${nodeId}`;
    checkNodeId(nodeId, operation);
    await engineCall(operation, () => this.docker.getNode(nodeId).remove({ force }) as Promise<unknown>);
  }

  async runningTasks(nodeId?: string): Promise<NodeTask[]> {
    const operation = nodeId ? `tasksOnNode ${nodeId}` : 'runningTasks';
    if (nodeId !== undefined) checkNodeId(nodeId, operation);
    const filters: Record<string, string[]> = { 'desired-state': ['running'] };
    if (nodeId) filters.node = [nodeId];
    const tasks = (await engineCall(operation, () => this.docker.listTasks({ filters }))) as {
      ID: string;
      ServiceID?: string;
      NodeID?: string;
      DesiredState?: string;
      Status?: { State?: string };
    }[];
    return tasks
      .filter((t) => !nodeId || t.NodeID === nodeId)
      .map((t) => ({ id: t.ID, serviceId: t.ServiceID ?? '', nodeId: t.NodeID ?? '', state: t.Status?.State ?? '', desiredState: t.DesiredState ?? '' }));
  }

  replicatedServiceIds(): Promise<Set<string>> {
    return replicatedServiceIds(this.docker);
  }

  async skiffServices(): Promise<SkiffService[]> {
    const services = (await engineCall('listServices', () => this.docker.listServices({ filters: { label: ['skiff.managed=true'] } }))) as unknown as {
      ID: string;
      Spec?: { Name?: string; Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } }; TaskTemplate?: { ContainerSpec?: { Image?: string } } };
    }[];
    return services.map((s) => ({
      id: s.ID,
      name: s.Spec?.Name ?? '',
      labels: s.Spec?.Labels ?? {},
      image: s.Spec?.TaskTemplate?.ContainerSpec?.Image ?? '',
      replicas: s.Spec?.Mode?.Replicated ? (s.Spec.Mode.Replicated.Replicas ?? 0) : null,
    }));
  }
}

export async function replicatedServiceIds(docker: Dockerode): Promise<Set<string>> {
  const services = (await engineCall('listServices', () => docker.listServices())) as unknown as { ID: string; Spec?: { Mode?: { Replicated?: unknown } } }[];
  return new Set(services.filter((s) => s.Spec?.Mode?.Replicated !== undefined).map((s) => s.ID));
}

function summary(n: EngineNode, self: string): NodeSummary {
  return {
    id: n.ID,
    hostname: n.Description?.Hostname ?? '',
    role: n.Spec?.Role ?? '',
    availability: n.Spec?.Availability ?? '',
    state: n.Status?.State ?? '',
    address: n.ManagerStatus?.Addr ?? n.Status?.Addr ?? '',
    leader: n.ManagerStatus?.Leader === true,
    engineVersion: n.Description?.Engine?.EngineVersion ?? '',
    labels: n.Spec?.Labels ?? {},
    self: n.ID === self,
  };
}

