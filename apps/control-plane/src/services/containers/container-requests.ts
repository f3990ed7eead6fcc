import type { Contracts, OutputOf } from '@skiff/contracts';
import { wireServerId } from '@skiff/domain';
import { ContainerOperation, type ContainerRequest } from '@skiff/proto';
import { type AgentControl, serverLabel } from '../../agents/outbound/control-client.js';
import { DomainError } from '../../errors.js';

/** One container as the agent lists it (apps/agent/src/docker/container-ops.ts ContainerSummary). */
export type AgentContainer = OutputOf<Contracts['container']['getContainers']>[number];

/**
 * ContainerRequests (proto ContainerRequest) to a server's agent (null: the platform host's),
 * through the control channel. An agent that does not answer is the control client's
 * BAD_REQUEST naming the server; one that could not carry out the request, a BAD_REQUEST
 * saying what it said.
 */
export class ContainerRequests {
  constructor(private readonly agents: AgentControl) {}

  async list(serverId: string | null): Promise<AgentContainer[]> {
    return (await this.send(serverId, { operation: ContainerOperation.CONTAINER_OPERATION_LIST })) as AgentContainer[];
  }

  /** The inspect document of a Skiff container, or null when the server has none by that reference. */
  async inspect(serverId: string | null, containerId: string): Promise<Record<string, unknown> | null> {
    return (await this.send(serverId, { operation: ContainerOperation.CONTAINER_OPERATION_INSPECT, containerId })) as Record<string, unknown> | null;
  }

  /** Restarts the container if it is still the workload's; false when it is not (or gone). */
  async restart(serverId: string | null, containerId: string, owner: { kind: string; id: string }): Promise<boolean> {
    const done = await this.send(serverId, {
      operation: ContainerOperation.CONTAINER_OPERATION_RESTART,
      containerId,
      expectKind: owner.kind,
      expectId: owner.id,
    });
    return done !== null;
  }

  private async send(serverId: string | null, request: Partial<ContainerRequest>): Promise<unknown> {
    const wire = wireServerId(serverId);
    const reply = await this.agents.request(wire, {
      request: { $case: 'container', value: { operation: 0, containerId: '', expectKind: '', expectId: '', ...request } },
    });
    if (reply.container?.notFound) return null;
    if (reply.error !== '') throw new DomainError('BAD_REQUEST', `The agent of ${serverLabel(wire)} could not answer: ${reply.error}`);
    return JSON.parse(reply.container?.resultJson || 'null') as unknown;
  }
}
