import type { Db, Deployment } from '@skiff/db';
import { DEPLOYED_KINDS, ownerOfDeployment } from '../deployments/workloads.js';
import { recordEvent } from './events.js';

/** The reason as it goes out to channels: one short paragraph. */
const REASON_CAP = 500;

/**
 * A deployment ended `done` or `error`: `appDeploy` or `appBuildError`, for an application
 * and a compose stack alike (a compose stack that fails to deploy is its build failing).
 * Called in the transaction that ends it.
 */
export async function recordDeploymentEnd(tx: Db, d: Deployment, status: 'done' | 'error', at: Date, reason: string | null): Promise<void> {
  const owner = ownerOfDeployment(d);
  const { table } = DEPLOYED_KINDS[owner.kind];
  const w = await tx
    .selectFrom(`${table as 'applications'} as w`)
    .innerJoin('environments as e', 'e.id', 'w.environmentId')
    .innerJoin('projects as p', 'p.id', 'e.projectId')
    .select(['w.name', 'w.appName', 'w.serverId', 'e.id as environmentId', 'e.name as environmentName', 'p.id as projectId', 'p.name as projectName', 'p.organizationId'])
    .where('w.id', '=', owner.id)
    .executeTakeFirst();
  if (!w) return;
  await recordEvent(tx, {
    organizationId: w.organizationId,
    kind: status === 'done' ? 'appDeploy' : 'appBuildError',
    outcome: status === 'done' ? 'success' : 'failure',
    workload: { kind: owner.kind, id: owner.id, name: w.name },
    projectId: w.projectId,
    environmentId: w.environmentId,
    serverId: w.serverId,
    summary: {
      deploymentId: d.id,
      title: d.title,
      status,
      reason: reason ? reason.slice(0, REASON_CAP) : null,
      appName: w.appName,
      project: w.projectName,
      environment: w.environmentName,
    },
    occurredAt: at,
  });
}
