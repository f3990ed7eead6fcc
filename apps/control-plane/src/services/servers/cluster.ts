import { type OutputOf, contracts } from '@skiff/contracts';
import type { Db, ServiceTable } from '@skiff/db';
import { LOCAL_SERVER_ID } from '@skiff/domain';
import { ClusterOperation, type ClusterRequest, type ControlReply } from '@skiff/proto';
import { z } from 'zod';
import type { Principal } from '../../authz/principal.js';
import { isAdmin, requirePlatformAdmin } from '../../authz/policy.js';
import { type AgentControl, agentResult, serverLabel } from '../../agents/outbound/control-client.js';
import { DomainError, Forbidden, Invalid, NotFound } from '../../errors.js';

/** How long a server's agent has to answer a cluster request; a removal drains the node first. */
export const CLUSTER_REQUEST_TIMEOUT_MS = 10_000;
export const NODE_REMOVAL_TIMEOUT_MS = 120_000;
/** The agent's share of a removal's deadline: it answers before the control plane stops waiting. */
const DRAIN_TIMEOUT_MS = NODE_REMOVAL_TIMEOUT_MS - 15_000;

const NodeSummaries = z.array(z.looseObject({ id: z.string(), hostname: z.string(), role: z.string() }));
const Inspected = z.looseObject({ ID: z.string() });
const ServiceTasks = z.array(
  z.object({
    name: z.string(),
    kind: z.string(),
    id: z.string(),
    image: z.string(),
    replicas: z.number().nullable(),
    tasks: z.array(z.object({ id: z.string(), nodeId: z.string(), hostname: z.string(), state: z.string(), desiredState: z.string() })),
  }),
);
const { addWorker, removeNode } = contracts.cluster;

/** The table of each workload kind a Skiff service label names. */
const KIND_TABLES: Record<string, ServiceTable> = { application: 'applications', compose: 'composeStacks', cache: 'cacheInstances' };

export interface ClusterAgents {
  /** Agent control for quick reads and join commands. */
  reads: AgentControl;
  /** Agent control with the longer deadline of a node removal (drain, then remove). */
  removals: AgentControl;
}

/**
 * The cluster.* operations: the swarm of a server, read and changed through its agent
 * (proto ClusterRequest). A server's swarm is the whole machine set of an organization's
 * server, so only that organization's administrators reach it; the platform host's swarm
 * (`local`, or no serverId) serves every organization, so it needs the platform administrator.
 */
export class ClusterService {
  constructor(
    private readonly db: Db,
    private readonly agents: ClusterAgents,
  ) {}

  async getNodes(p: Principal, input: { serverId?: string }) {
    const server = await this.target(p, input.serverId);
    return this.send(server, { operation: ClusterOperation.CLUSTER_OPERATION_LIST_NODES }, NodeSummaries);
  }

  async getNodeInfo(p: Principal, input: { nodeId: string; serverId?: string }) {
    const server = await this.target(p, input.serverId);
    return this.send(server, { operation: ClusterOperation.CLUSTER_OPERATION_INSPECT_NODE, nodeId: input.nodeId }, Inspected);
  }

  /** The Skiff services on the swarm that belong to the caller's organization, with the nodes of their tasks. */
  async getNodeApps(p: Principal, input: { serverId?: string }) {
    const server = await this.target(p, input.serverId);
    const services = await this.send(server, { operation: ClusterOperation.CLUSTER_OPERATION_LIST_SERVICES }, ServiceTasks);
    const owned = await this.ownedWorkloads(p.organizationId, services);
    return services.filter((s) => owned.has(`${s.kind}:${s.id}`));
  }

  async addWorker(p: Principal, input: { serverId: string }): Promise<OutputOf<typeof addWorker>> {
    const server = await this.target(p, input.serverId);
    return this.send(server, { operation: ClusterOperation.CLUSTER_OPERATION_JOIN_WORKER }, addWorker.output);
  }

  async addManager(p: Principal, input: { serverId: string }): Promise<OutputOf<typeof addWorker>> {
    const server = await this.target(p, input.serverId);
    return this.send(server, { operation: ClusterOperation.CLUSTER_OPERATION_JOIN_MANAGER }, addWorker.output);
  }

  async removeNode(p: Principal, input: { serverId: string; nodeId: string }): Promise<OutputOf<typeof removeNode>> {
    const server = await this.target(p, input.serverId);
    return this.send(
      server,
      { operation: ClusterOperation.CLUSTER_OPERATION_REMOVE_NODE, nodeId: input.nodeId, drainTimeoutMs: DRAIN_TIMEOUT_MS },
      removeNode.output,
      this.agents.removals,
    );
  }

  /** The wire id of the server whose swarm the caller addresses, once they may. */
  private async target(p: Principal, serverId: string | undefined): Promise<string> {
    if (!serverId || serverId === LOCAL_SERVER_ID) {
      requirePlatformAdmin(p, "The platform host's cluster serves every organization: only a platform administrator may use it");
      return LOCAL_SERVER_ID;
    }
    const server = await this.db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw NotFound('No such server');
    if (!isAdmin(p)) throw Forbidden("Only an administrator of the server's organization may use its cluster");
    return server.id;
  }

  private async send<T>(wire: string, request: Partial<ClusterRequest>, result: z.ZodType<T>, agents = this.agents.reads): Promise<T> {
    const reply = await agents.request(wire, { request: { $case: 'cluster', value: { operation: ClusterOperation.CLUSTER_OPERATION_UNSPECIFIED, nodeId: '', drainTimeoutMs: 0, ...request } } });
    return clusterAnswer(wire, reply, result);
  }

  private async ownedWorkloads(organizationId: string, services: { kind: string; id: string }[]): Promise<Set<string>> {
    const owned = new Set<string>();
    for (const [kind, table] of Object.entries(KIND_TABLES)) {
      const ids = [...new Set(services.filter((s) => s.kind === kind && s.id).map((s) => s.id))];
      if (ids.length === 0) continue;
      const rows = await this.db
        .selectFrom(table)
        .innerJoin('environments', 'environments.id', `${table}.environmentId`)
        .innerJoin('projects', 'projects.id', 'environments.projectId')
        .select(`${table}.id as id`)
        .where(`${table}.id`, 'in', ids)
        .where('projects.organizationId', '=', organizationId)
        .execute();
      for (const row of rows) owned.add(`${kind}:${row.id}`);
    }
    return owned;
  }
}

function clusterAnswer<T>(wire: string, reply: ControlReply, result: z.ZodType<T>): T {
  if (reply.error) {
    if (reply.cluster?.notFound) throw NotFound(`No such node in the swarm of ${serverLabel(wire)}`);
    if (reply.cluster?.refusedField === 'node_id') throw Invalid('nodeId', reply.error);
    throw agentTrouble(wire, `says ${reply.error}`);
  }
  if (!reply.cluster) throw agentTrouble(wire, 'gave no answer to a cluster request (is it older than the control plane?)');
  return agentResult(reply.cluster.resultJson, result, (what) => agentTrouble(wire, what));
}

function agentTrouble(wire: string, what: string): DomainError {
  return new DomainError('BAD_REQUEST', `The cluster of ${serverLabel(wire)} did not do it: its agent ${what}`);
}
