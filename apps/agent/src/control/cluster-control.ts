/**
 * Answers a ClusterRequest (proto ControlRequest.cluster): the cluster.* operations on the
 * swarm this agent's engine manages, carried out at once. A refusal that is about the request
 * names its field (ClusterReply.refused_field). Join tokens are secrets: they go into the
 * reply only, never into a log.
 */
import { ClusterOperation, type ClusterRequest, type ControlReply } from '@skiff/proto';
import type { Logger } from 'pino';
import { DockerError } from '../docker/errors.js';
import { isNodeId, type SwarmNodes } from '../docker/swarm-nodes.js';
import type { RegistryRemoval } from '../deployments/server-registry-teardown.js';

export interface ClusterControlDeps {
  nodes: SwarmNodes;
  log: Logger;
  /** Called when a removal leaves the swarm with one node: a single machine runs no server registry. */
  removeServerRegistry?: () => Promise<RegistryRemoval>;
  /** Default longest wait for a drained node's tasks to leave it (60 s). */
  drainTimeoutMs?: number;
  pollIntervalMs?: number;
}

class Refused extends Error {
  constructor(
    message: string,
    readonly field = '',
    readonly notFound = false,
  ) {
    super(message);
  }
}

const noSuchNode = (id: string) => new Refused(`the swarm has no node ${id}`, 'node_id', true);

export class ClusterControl {
  private readonly log: Logger;

  constructor(private readonly deps: ClusterControlDeps) {
    this.log = deps.log.child({ component: 'cluster-control' });
  }

  async handle(request: ClusterRequest): Promise<ControlReply> {
    try {
      return answer(await this.carryOut(request));
    } catch (err) {
      if (err instanceof Refused) return refusal(err.message, err.field, err.notFound);
      this.log.error({ err: err instanceof DockerError ? err.message : err, operation: ClusterOperation[request.operation] }, 'cluster request failed');
      return refusal(`the agent could not carry out the cluster request: ${(err as Error).message}`);
    }
  }

  private async carryOut(request: ClusterRequest): Promise<unknown> {
    const { nodes } = this.deps;
    switch (request.operation) {
      case ClusterOperation.CLUSTER_OPERATION_LIST_NODES:
        return nodes.list();
      case ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE: {
        const node = await nodes.inspect(nodeId(request));
        if (!node) throw noSuchNode(request.nodeId);
        return node;
      }
      case ClusterOperation.CLUSTER_OPERATION_LIST_SERVICES:
        return this.services();
      case ClusterOperation.CLUSTER_OPERATION_JOIN_WORKER:
        return this.join('worker');
      case ClusterOperation.CLUSTER_OPERATION_JOIN_MANAGER:
        return this.join('manager');
      case ClusterOperation.CLUSTER_OPERATION_REMOVE_NODE:
        return this.remove(nodeId(request), request.drainTimeoutMs || (this.deps.drainTimeoutMs ?? 60_000));
      default:
        throw new Refused('the cluster request names no operation this agent knows');
    }
  }

  private async join(role: 'worker' | 'manager') {
    const [tokens, managerAddress] = await Promise.all([this.deps.nodes.joinTokens(), this.deps.nodes.managerAddress()]);
    const token = tokens[role];
    return { role, token, managerAddress, command: `docker swarm join --token ${token} ${managerAddress}` };
  }

  private async services() {
    const { nodes } = this.deps;
    const [services, tasks, list] = await Promise.all([nodes.skiffServices(), nodes.runningTasks(), nodes.list()]);
    const hostnames = new Map(list.map((n) => [n.id, n.hostname]));
    return services
      .map((s) => ({
        name: s.name,
        kind: s.labels['skiff.kind'] ?? '',
        id: s.labels['skiff.id'] ?? '',
        image: s.image,
        replicas: s.replicas,
        tasks: tasks
          .filter((t) => t.serviceId === s.id)
          .map((t) => ({ id: t.id, nodeId: t.nodeId, hostname: hostnames.get(t.nodeId) ?? '', state: t.state, desiredState: t.desiredState })),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Drain, wait for the node's tasks to leave it, demote a manager, remove. */
  private async remove(id: string, timeoutMs: number) {
    const { nodes } = this.deps;
    const node = (await nodes.list()).find((n) => n.id === id);
    if (!node) throw noSuchNode(id);
    if (node.self) throw new Refused(`node ${id} is the one this agent manages the swarm from: it cannot be removed`, 'node_id');
    const [tasks, replicated] = await Promise.all([nodes.runningTasks(), nodes.replicatedServiceIds()]);
    const onNode = tasks.filter((t) => t.nodeId === id);
    // Each replicated service with a task there runs as many tasks elsewhere afterwards.
    const wanted = new Map<string, number>();
    for (const t of onNode) if (replicated.has(t.serviceId)) wanted.set(t.serviceId, tasks.filter((x) => x.serviceId === t.serviceId).length);
    await nodes.update(id, { availability: 'drain' });
    this.log.info({ nodeId: id, hostname: node.hostname, tasks: onNode.length }, 'draining a node before removing it');
    await this.waitForTasksMoved(id, wanted, timeoutMs);
    if (node.role === 'manager') await nodes.update(id, { role: 'worker' });
    // Drained, it runs nothing of the swarm's: a node still up is removed all the same (the
    // machine leaves the swarm with `docker swarm leave`).
    await nodes.remove(id, node.state !== 'down');
    this.log.info({ nodeId: id, hostname: node.hostname }, 'node removed from the swarm');
    if (this.deps.removeServerRegistry && (await nodes.list()).length === 1) {
      const { removed, problems } = await this.deps.removeServerRegistry();
      if (removed.length > 0 || problems.length > 0) this.log.info({ removed, problems }, 'the swarm is back to one node: its server registry is removed');
    }
    return { nodeId: id, hostname: node.hostname, movedTasks: onNode.length };
  }

  /** Until the node has no task the swarm wants running, and the moved services run their count of tasks elsewhere. */
  private async waitForTasksMoved(id: string, wanted: Map<string, number>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const tasks = await this.deps.nodes.runningTasks();
      const running = (serviceId: string) => tasks.filter((t) => t.serviceId === serviceId && t.nodeId !== id && t.state === 'running').length;
      const left = tasks.filter((t) => t.nodeId === id).length + [...wanted].reduce((sum, [serviceId, count]) => sum + Math.max(0, count - running(serviceId)), 0);
      if (left === 0) return;
      if (Date.now() >= deadline) {
        throw new Refused(`node ${id} is drained but ${left} task(s) did not move to other nodes within ${Math.round(timeoutMs / 1000)} s; it was not removed`);
      }
      await new Promise((resolve) => setTimeout(resolve, this.deps.pollIntervalMs ?? 500));
    }
  }
}

function nodeId(request: ClusterRequest): string {
  if (!isNodeId(request.nodeId)) throw new Refused('node_id must be a swarm node id (25 lowercase letters and digits)', 'node_id');
  return request.nodeId;
}

function answer(result: unknown): ControlReply {
  return { commandIds: [], error: '', cluster: { resultJson: JSON.stringify(result), refusedField: '', notFound: false } };
}

function refusal(error: string, field = '', notFound = false): ControlReply {
  return { commandIds: [], error, cluster: { resultJson: '', refusedField: field, notFound } };
}
