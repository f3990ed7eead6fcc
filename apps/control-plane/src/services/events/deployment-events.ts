import type { Db, Deployment } from '@skiff/db';
import type { CrashLoopEvent } from '../deployments/crash-loop-event.js';
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
  const w = await workloadContext(tx, table as 'applications', owner.id);
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

/** Lines of the failing task's output an event carries (the newest). */
const CRASH_LOG_LINES = 10;

/**
 * An application whose containers keep exiting after they started (the agent's crash loop
 * report, services/deployments/crash-loops.ts): `appBuildError`, with the reason, the last
 * lines of the failing task's output and the rollback queued, if any.
 */
export async function recordCrashLoop(db: Db, e: CrashLoopEvent): Promise<void> {
  const w = await workloadContext(db, 'applications', e.applicationId);
  if (!w) return;
  const lines = e.logLines.slice(-CRASH_LOG_LINES).join('\n');
  await recordEvent(db, {
    organizationId: w.organizationId,
    kind: 'appBuildError',
    outcome: 'failure',
    workload: { kind: 'application', id: e.applicationId, name: w.name },
    projectId: w.projectId,
    environmentId: w.environmentId,
    serverId: e.serverId,
    summary: {
      deploymentId: e.deploymentId,
      status: 'crash loop',
      reason: `${e.reason}${lines ? `; last lines:\n${lines}` : ''}`.slice(0, REASON_CAP),
      appName: e.appName,
      project: w.projectName,
      environment: w.environmentName,
      rollbackDeploymentId: e.rollback && 'deploymentId' in e.rollback ? e.rollback.deploymentId : null,
    },
  });
}

/** A workload's names and where it stands (environment, project, organization), as its events carry them. */
function workloadContext(db: Db, table: 'applications' | 'composeStacks', id: string) {
  return db
    .selectFrom(`${table as 'applications'} as w`)
    .innerJoin('environments as e', 'e.id', 'w.environmentId')
    .innerJoin('projects as p', 'p.id', 'e.projectId')
    .select(['w.name', 'w.appName', 'w.serverId', 'e.id as environmentId', 'e.name as environmentName', 'p.id as projectId', 'p.name as projectName', 'p.organizationId'])
    .where('w.id', '=', id)
    .executeTakeFirst();
}
