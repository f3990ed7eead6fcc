import type { Db, Deployment } from '@skiff/db';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { DomainError } from '../../errors.js';
import { recordDeploymentEnd } from '../events/deployment-events.js';
import type { ServiceDeps } from '../shared/deps.js';
import { insertDeployment } from './deployment-records.js';
import { appendLog, canMove } from './deployment-status.js';
import { lockWorkloadForWork, setDeployedStatus, type WorkloadOwner, workloadRow } from './workloads.js';

/** Inside a deploy's transaction: the reserved deployment, locked; still `queued` unless it was cancelled meanwhile. */
export async function takeReserved(tx: Db, deploymentId: string, image: string | null, commit: string | null = null): Promise<Deployment> {
  const d = await tx.selectFrom('deployments').selectAll().where('id', '=', deploymentId).forUpdate().executeTakeFirst();
  // Removed with its preview before it started.
  if (!d) throw new DomainError('NOT_FOUND', 'the deployment was removed before it started');
  if (d.status !== 'queued') return d;
  return tx.updateTable('deployments').set({ image, ...(commit ? { commit } : {}) }).where('id', '=', deploymentId).returningAll().executeTakeFirstOrThrow();
}

/** The words a refusal ends a deployment with. */
export function refusalText(err: unknown): string | null {
  if (!(err instanceof DomainError)) return null;
  return err.issues.length > 0 ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : err.message;
}

/**
 * Deploys whose source needs the forge first (a clone login minted through its API, up to
 * 15 s): the `queued` deployment is recorded at once (no command yet) so a webhook can answer
 * with it, and the deploy itself (login, command) runs after the answer with that deployment's
 * id. A refusal then (the forge unreachable, a setting missing) ends the deployment in `error`
 * with the reason, in its log too. A deployment left without its command by a restart is
 * started again when the control plane starts (`resume`).
 */
export class DeferredDeploys {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly log: Logger,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Records the queued deployment of `owner` (of one of its previews when `previewDeploymentId`). */
  async reserve(owner: WorkloadOwner, input: { title: string; previewDeploymentId?: string | null }): Promise<string> {
    const deploymentId = this.deps.ids('dep');
    await this.db.transaction().execute(async (tx) => {
      await lockWorkloadForWork(tx, owner);
      const row = await workloadRow(tx, owner);
      if (!row) throw new DomainError('NOT_FOUND', `No such ${owner.kind}`);
      await insertDeployment(tx, { ...owner, serverId: row.serverId }, { deploymentId, title: input.title, how: 'deploy', previewDeploymentId: input.previewDeploymentId ?? null });
    });
    return deploymentId;
  }

  /** Runs the deploy of a reserved deployment; a refusal ends it (`fail`) and is handed to `refused`. Never throws. */
  async start(deploymentId: string, deploy: () => Promise<unknown>, refused: (reason: string) => Promise<void> = async () => undefined): Promise<void> {
    try {
      await deploy();
    } catch (err) {
      const reason = refusalText(err) ?? 'the deploy could not be queued (see the control plane log)';
      if (refusalText(err) === null) this.log.error({ err, deploymentId }, 'deferred deploy failed');
      try {
        await this.fail(deploymentId, reason);
        await refused(reason);
      } catch (failErr) {
        this.log.error({ err: failErr, deploymentId }, 'could not end a deferred deploy');
      }
    }
  }

  /** Ends a deployment that never got its command in `error`, with the reason in its log. */
  async fail(deploymentId: string, reason: string): Promise<void> {
    const at = this.deps.clock();
    await this.db.transaction().execute(async (tx) => {
      const d = await tx.selectFrom('deployments').selectAll().where('id', '=', deploymentId).forUpdate().executeTakeFirst();
      if (!d || !canMove(d.status, 'error')) return;
      await tx
        .updateTable('deployments')
        .set({ status: 'error', reason, finishedAt: at, log: appendLog(d.log, [`Not started: ${reason}`]) })
        .where('id', '=', d.id)
        .execute();
      await setDeployedStatus(tx, d, 'error');
      await recordDeploymentEnd(tx, d, 'error', at, reason);
    });
  }

  /** Queued deployments without a command (a deploy left before it queued one): they are the deferred ones. */
  async unstarted(): Promise<Deployment[]> {
    return this.db
      .selectFrom('deployments')
      .selectAll()
      .where('status', '=', 'queued')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('commands').select(sql`1`.as('one')).whereRef('commands.deploymentId', '=', 'deployments.id'))))
      .orderBy('createdAt')
      .execute();
  }
}
