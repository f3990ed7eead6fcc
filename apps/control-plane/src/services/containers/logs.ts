import type { LogQuery } from '@skiff/contracts';
import { wireServerId } from '@skiff/domain';
import type { LogStreamClient, LogTarget } from '../../agents/outbound/log-streams.js';
import type { Principal } from '../../authz/principal.js';
import { requireGrant } from '../../authz/policy.js';
import { Invalid } from '../../errors.js';
import type { DeploymentService } from '../deployments/deployments.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ContainerRequests } from './container-requests.js';
import type { ContainerService } from './containers.js';

export type LogEvent = { type: 'line'; stream: 'stdout' | 'stderr'; text: string } | { type: 'end'; reason: string };

const DEFAULT_TAIL = 100;
const ENDED = new Set(['done', 'error', 'cancelled']);

/**
 * The log streams (`GET /api/logs.*`): runtime logs come live from the server's agent
 * (agents/outbound/log-streams.ts) for what the caller may read (the workload's own access
 * rules; a container needs canAccessToContainer and one of the caller's workloads); a
 * deployment's log is the stored one, read again every `pollMs` while the deployment runs.
 * Everything is checked before the first event, so a refusal is a plain error answer.
 */
export class LogService {
  constructor(
    private readonly o: {
      access: ServiceAccess;
      containers: ContainerService;
      requests: ContainerRequests;
      streams: LogStreamClient;
      deployments: Pick<DeploymentService, 'readLogs'>;
      pollMs?: number;
    },
  ) {}

  async service(p: Principal, q: LogQuery<'service'>, signal: AbortSignal): Promise<AsyncGenerator<LogEvent>> {
    const named = [q.applicationId && 'applicationId', q.cacheId && 'cacheId', q.composeId && 'composeId'].filter(Boolean);
    if (named.length !== 1) throw Invalid('applicationId', 'name exactly one of applicationId, composeId and cacheId');
    if (q.serviceName !== undefined && !q.composeId) throw Invalid('serviceName', 'only with composeId');
    let serverId: string | null;
    let target: LogTarget;
    if (q.applicationId || q.cacheId) {
      const kind = q.applicationId ? 'application' : 'cache';
      const { row } = await this.o.access.find(p, kind, (q.applicationId ?? q.cacheId)!);
      serverId = row.serverId;
      target = { serviceName: row.appName, owner: { kind, id: row.id } };
    } else {
      if (!q.serviceName) throw Invalid('serviceName', 'required with composeId');
      const { row } = await this.o.access.find(p, 'compose', q.composeId!);
      serverId = row.serverId;
      const owner = { kind: 'compose', id: row.id };
      if (row.composeType === 'stack') target = { serviceName: `${row.appName}_${q.serviceName}`, owner };
      else {
        const listed = await this.o.requests.list(serverId);
        const found = listed
          .filter((c) => c.labels['skiff.id'] === row.id && c.labels['com.docker.compose.project'] === row.appName)
          .filter((c) => c.labels['com.docker.compose.service'] === q.serviceName)
          .sort((a, b) => Number(b.state === 'running') - Number(a.state === 'running'));
        if (!found[0]) throw Invalid('serviceName', `the stack runs no container of service ${q.serviceName}`);
        target = { containerId: found[0].containerId, owner };
      }
    }
    return this.runtime(serverId, target, q, signal);
  }

  async container(p: Principal, q: LogQuery<'container'>, signal: AbortSignal): Promise<AsyncGenerator<LogEvent>> {
    requireGrant(p, 'canAccessToContainer');
    const { serverId, inspected, owner } = await this.o.containers.find(p, q.containerId, q.serverId);
    return this.runtime(serverId, { containerId: String(inspected.Id), owner }, q, signal);
  }

  async deployment(p: Principal, q: LogQuery<'deployment'>, signal: AbortSignal): Promise<AsyncGenerator<LogEvent>> {
    const first = await this.o.deployments.readLogs(p, q.deploymentId);
    return this.followDeployment(p, first, q.follow === true, signal);
  }

  private async runtime(
    serverId: string | null,
    target: LogTarget,
    q: { tail?: number; since?: number; follow?: boolean },
    signal: AbortSignal,
  ): Promise<AsyncGenerator<LogEvent>> {
    const chunks = await this.o.streams.open(
      wireServerId(serverId),
      target,
      { tail: q.tail ?? DEFAULT_TAIL, sinceUnix: q.since ?? 0, follow: q.follow === true },
      signal,
    );
    return (async function* () {
      for await (const chunk of chunks) {
        for (const line of chunk.lines) yield { type: 'line' as const, stream: line.stderr ? ('stderr' as const) : ('stdout' as const), text: line.text };
        if (chunk.end) {
          yield { type: 'end' as const, reason: chunk.reason };
          return;
        }
      }
    })();
  }

  private async *followDeployment(
    p: Principal,
    first: { status: string; log: string },
    follow: boolean,
    signal: AbortSignal,
  ): AsyncGenerator<LogEvent> {
    let current = first;
    let sent = '';
    for (;;) {
      // The kept log is capped at its newest part: when its start moved, it is sent whole again.
      const fresh = current.log.startsWith(sent) ? current.log.slice(sent.length) : current.log;
      const complete = fresh.lastIndexOf('\n') + 1;
      const ended = ENDED.has(current.status) || !follow;
      const ready = ended ? fresh : fresh.slice(0, complete);
      for (const text of ready.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '')) yield { type: 'line', stream: 'stdout', text };
      sent = current.log.startsWith(sent) ? sent + ready : ready;
      if (ended) {
        yield { type: 'end', reason: follow ? `deployment ${current.status}` : 'end of log' };
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.o.pollMs ?? 1000));
      if (signal.aborted) return;
      current = await this.o.deployments.readLogs(p, (first as { deploymentId?: string }).deploymentId ?? '');
    }
  }
}
