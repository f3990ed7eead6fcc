import type { Db } from '@skiff/db';
import type { Principal } from '../../authz/principal.js';
import { canSeeServer, canSeeService } from '../../authz/policy.js';
import { Forbidden, NotFound } from '../../errors.js';
import { type ServiceKind, serviceTables } from '../shared/service-records.js';
import type { AgentContainer, ContainerRequests } from './container-requests.js';

export interface Workload {
  kind: ServiceKind;
  id: string;
  appName: string;
}

const STACK = 'com.docker.stack.namespace';
const COMPOSE_PROJECT = 'com.docker.compose.project';
const SWARM_SERVICE = 'com.docker.swarm.service.name';

/**
 * The container.* operations. The server's agent lists Skiff's containers (labelled
 * `skiff.managed`, `skiff.kind`, `skiff.id`); the caller sees those of the workloads of their
 * organization on that server, a member only those of the services granted. A container of
 * another organization, or not Skiff's, does not exist for the caller (NOT_FOUND).
 */
export class ContainerService {
  constructor(
    private readonly db: Db,
    private readonly agents: ContainerRequests,
  ) {}

  async getContainers(p: Principal, input: { serverId?: string }): Promise<AgentContainer[]> {
    return this.visible(p, input.serverId, () => true);
  }

  async getContainersByAppNameMatch(p: Principal, input: { appName: string; appType?: 'stack' | 'container-compose'; serverId?: string }) {
    return this.visible(p, input.serverId, (c) => {
      if (input.appType === 'stack') return c.labels[STACK] === input.appName;
      if (input.appType === 'container-compose') return c.labels[COMPOSE_PROJECT] === input.appName;
      return c.name.startsWith(input.appName);
    });
  }

  async getContainersByAppLabel(p: Principal, input: { appName: string; type: 'standalone' | 'cluster'; serverId?: string }) {
    const label = input.type === 'standalone' ? COMPOSE_PROJECT : SWARM_SERVICE;
    return this.visible(p, input.serverId, (c) => c.labels[label] === input.appName);
  }

  async getStackContainersByAppName(p: Principal, input: { appName: string; serverId?: string }) {
    return this.visible(p, input.serverId, (c) => c.labels[STACK] === input.appName);
  }

  async getServiceContainersByAppName(p: Principal, input: { appName: string; serverId?: string }) {
    return this.visible(p, input.serverId, (c) => c.labels[SWARM_SERVICE] === input.appName);
  }

  /**
   * The engine's inspect document of a container the caller may see. Environment values are
   * the workload's secrets (kept encrypted, shown by the service's own operations): here only
   * their names, each value replaced by `<redacted>`.
   */
  async getConfig(p: Principal, input: { containerId: string; serverId?: string }): Promise<Record<string, unknown>> {
    const { inspected } = await this.find(p, input.containerId, input.serverId);
    const config = inspected.Config as { Env?: string[] | null } | undefined;
    if (config?.Env) config.Env = config.Env.map((line) => `${line.split('=', 1)[0]}=<redacted>`);
    return inspected;
  }

  async restartContainer(p: Principal, input: { containerId: string; serverId?: string }): Promise<Record<string, never>> {
    const { serverId, inspected, owner } = await this.find(p, input.containerId, input.serverId);
    if (!(await this.agents.restart(serverId, String(inspected.Id), owner))) throw NotFound('No such container');
    return {};
  }

  /** The server's id (null: the platform host): one of the caller's organization (NOT_FOUND otherwise) they may use. */
  async server(p: Principal, serverId: string | undefined): Promise<string | null> {
    if (serverId === undefined) return null;
    const server = await this.db.selectFrom('servers').select(['id', 'organizationId']).where('id', '=', serverId).executeTakeFirst();
    if (!server || server.organizationId !== p.organizationId) throw NotFound('No such server');
    if (!canSeeServer(p, serverId)) throw Forbidden('No access to this server');
    return serverId;
  }

  /** The workloads of the caller's organization on a server (null: the platform host) the caller may see, by `kind:id`. */
  async workloads(p: Principal, serverId: string | null): Promise<Map<string, Workload>> {
    const found = new Map<string, Workload>();
    for (const kind of Object.keys(serviceTables) as ServiceKind[]) {
      // One query shape for the three tables, under one alias (typed as the applications table).
      const table = `${serviceTables[kind].table} as applications` as 'applications';
      let q = this.db
        .selectFrom(table)
        .innerJoin('environments', 'environments.id', 'applications.environmentId')
        .innerJoin('projects', 'projects.id', 'environments.projectId')
        .select(['applications.id as id', 'applications.serverId as serverId', 'applications.appName as appName', 'projects.id as projectId'])
        .where('projects.organizationId', '=', p.organizationId);
      q = serverId === null ? q.where('applications.serverId', 'is', null) : q.where('applications.serverId', '=', serverId);
      for (const row of await q.execute()) {
        if (canSeeService(p, row, row.projectId)) found.set(`${kind}:${row.id}`, { kind, id: row.id, appName: row.appName });
      }
    }
    return found;
  }

  private async visible(p: Principal, serverId: string | undefined, match: (c: AgentContainer) => boolean): Promise<AgentContainer[]> {
    const server = await this.server(p, serverId);
    const owned = await this.workloads(p, server);
    const listed = await this.agents.list(server);
    return listed.filter((c) => owned.has(`${c.labels['skiff.kind']}:${c.labels['skiff.id']}`) && match(c));
  }

  /** A container of the caller's workloads on the server: its inspect document and its workload; NOT_FOUND otherwise. */
  async find(p: Principal, containerId: string, serverId: string | undefined) {
    const server = await this.server(p, serverId);
    const owned = await this.workloads(p, server);
    // No workload of the caller's there: no container of theirs either, whatever the agent says.
    const inspected = owned.size === 0 ? null : await this.agents.inspect(server, containerId);
    const labels = (inspected?.Config as { Labels?: Record<string, string> } | undefined)?.Labels ?? {};
    const owner = owned.get(`${labels['skiff.kind']}:${labels['skiff.id']}`);
    if (!inspected || !owner) throw NotFound('No such container');
    return { serverId: server, inspected, owner };
  }
}
