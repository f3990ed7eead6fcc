import type { Contracts, OutputOf } from '@skiff/contracts';
import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import { DomainError, NotFound } from '../../errors.js';
import { commandForFollowing, followedStatus, operationOf } from '../../agents/outbound/command-status.js';
import { parseWorkloadKey } from '../../agents/outbound/workload-key.js';
import { type ServiceDeps, iso } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';

type CommandRecord = OutputOf<Contracts['command']['one']>;

const NO_SUCH_COMMAND = 'No such command';

/**
 * `command.one`: where a queued stop, start, reload, cache deploy… stands. A command is seen
 * by whoever sees the workload it acts on; one of another organization, of no workload, or
 * pruned (command-records.ts) is NOT_FOUND alike.
 */
export class CommandService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly access: ServiceAccess,
  ) {}

  async one(p: Principal, commandId: string): Promise<CommandRecord> {
    const row = await commandForFollowing(this.deps.db, commandId);
    const operation = row && operationOf(row.kind);
    const workload = row && parseWorkloadKey(row.workloadKey);
    if (!row || !operation || !workload || workload.type === 'proxy') throw NotFound(NO_SUCH_COMMAND);
    try {
      await this.access.find(p, workload.type, workload.id);
    } catch (err) {
      // A workload gone (its record deleted) or of another organization: the command is unknown too.
      if (err instanceof DomainError && err.code === 'NOT_FOUND') throw NotFound(NO_SUCH_COMMAND);
      throw err;
    }
    return {
      commandId: row.id,
      operation,
      applicationId: workload.type === 'application' ? workload.id : null,
      composeId: workload.type === 'compose' ? workload.id : null,
      cacheId: workload.type === 'cache' ? workload.id : null,
      deploymentId: row.deploymentId,
      serverId: row.serverId === LOCAL_SERVER_ID ? null : row.serverId,
      status: followedStatus(row, row.deploymentStatus ?? undefined),
      reason: row.status === 'failed' ? row.resultReason : null,
      createdAt: iso(row.createdAt),
      sentAt: row.publishedAt ? iso(row.publishedAt) : null,
      finishedAt: row.finishedAt ? iso(row.finishedAt) : null,
      deadline: iso(row.deadline),
    };
  }
}
