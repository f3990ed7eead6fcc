import type { Db } from '@skiff/db';
import { sql } from 'kysely';
import { DEPLOYED_KINDS, type WorkloadOwner, ownerOfDeployment } from './workloads.js';

/**
 * Retention of deployment records (issue 13, stores that only grow). A workload keeps its
 * newest `keep` ended deployments (by creation), with their logs (the `log` column), and
 * always: every deployment that is queued or running; its newest `done` one (what a rollback
 * would go back to); its newest `done` or `error` one by end time (what a cancel restores the
 * workload's status from: applicationStatusAfterCancel). Older ones are deleted when a
 * deployment ends, in the transaction that records the end: one DELETE, no scheduler. A
 * command row naming a deleted deployment keeps its row (`deployment_id` is set null).
 * A preview's deployments (rows of its parent application with `preview_deployment_id`) are
 * a series of their own: each preview keeps its newest `keep`, and they never count toward
 * the parent's (nor the parent's toward theirs).
 */

/** `SKIFF_KEEP_DEPLOYMENTS` by default. */
export const DEFAULT_KEEP_DEPLOYMENTS = 20;

/**
 * Deletes the workload's ended deployments past the newest `keep` (see above); answers how
 * many. `previewDeploymentId`: those of that preview of the application; null: the workload's own.
 */
export async function pruneDeployments(tx: Db, owner: WorkloadOwner, keep: number, previewDeploymentId: string | null = null): Promise<number> {
  const column = DEPLOYED_KINDS[owner.kind].deploymentColumn;
  const preview = previewDeploymentId === null ? (['is', null] as const) : (['=', previewDeploymentId] as const);
  const result = await tx
    .deleteFrom('deployments')
    .where(column, '=', owner.id)
    .where('previewDeploymentId', preview[0], preview[1])
    .where('status', 'in', ['done', 'error', 'cancelled'])
    .where('id', 'not in', (eb) =>
      eb
        .selectFrom(
          eb
            .selectFrom('deployments')
            .select([
              'id',
              'status',
              sql<string>`row_number() over (partition by (status in ('done', 'error', 'cancelled')) order by created_at desc, id desc)`.as('newest'),
              sql<string>`row_number() over (partition by (status = 'done') order by finished_at desc nulls last, id desc)`.as('newestDone'),
              sql<string>`row_number() over (partition by (status in ('done', 'error')) order by finished_at desc nulls last, id desc)`.as('newestSettled'),
            ])
            .where(column, '=', owner.id)
            .where('previewDeploymentId', preview[0], preview[1])
            .as('ranked'),
        )
        .select('ranked.id')
        .where((w) =>
          w.or([
            w('ranked.newest', '<=', sql<string>`${keep}`),
            w.and([w('ranked.status', '=', 'done'), w('ranked.newestDone', '=', sql<string>`1`)]),
            w.and([w('ranked.status', 'in', ['done', 'error']), w('ranked.newestSettled', '=', sql<string>`1`)]),
          ]),
        ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** After the deployment `deploymentId` ended (in the same transaction): prunes its workload's. */
export async function pruneAfterEnd(tx: Db, deploymentId: string, keep: number): Promise<void> {
  const d = await tx.selectFrom('deployments').select(['applicationId', 'composeId', 'status', 'previewDeploymentId']).where('id', '=', deploymentId).executeTakeFirst();
  if (!d || d.status === 'queued' || d.status === 'running') return;
  await pruneDeployments(tx, ownerOfDeployment(d), keep, d.previewDeploymentId);
}
