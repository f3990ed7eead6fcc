/**
 * Deployment records as the API shows them, the insert of a queued one, and the dotenv texts
 * a service's variables are resolved from: shared by application deploys, rollbacks
 * (rollback.ts) and compose deploys.
 */
import type { Contracts, OutputOf } from '@skiff/contracts';
import type { Db, Deployment, Environment, Project } from '@skiff/db';
import { LOCAL_SERVER_ID, type ServiceEnvSources, wireServerId } from '@skiff/domain';
import { type ServiceDeps, iso } from '../shared/deps.js';
import { type WorkloadOwner, deploymentOwnerColumns } from './workloads.js';

type DeploymentRecord = OutputOf<Contracts['deployment']['all']>[number];

export const deploymentRecord = (d: Deployment): DeploymentRecord => ({
  deploymentId: d.id,
  applicationId: d.applicationId,
  composeId: d.composeId,
  serverId: d.serverId === LOCAL_SERVER_ID ? null : d.serverId,
  status: d.status,
  title: d.title,
  description: d.description,
  reason: d.reason,
  createdAt: iso(d.createdAt),
  startedAt: d.startedAt ? iso(d.startedAt) : null,
  finishedAt: d.finishedAt ? iso(d.finishedAt) : null,
});

/**
 * Inside the transaction that queues a deploy's command: the `queued` deployment record of the
 * workload (whose row the caller locked with lockWorkloadForWork). Its title defaults to
 * "Deploy" or "Redeploy".
 */
export function insertDeployment(
  tx: Db,
  owner: WorkloadOwner & { serverId: string | null },
  input: { deploymentId: string; title?: string; description?: string; how: 'deploy' | 'redeploy' | 'rollback'; image?: string; previewDeploymentId?: string | null; commit?: string | null },
) {
  return tx
    .insertInto('deployments')
    .values({
      id: input.deploymentId,
      ...deploymentOwnerColumns(owner),
      serverId: wireServerId(owner.serverId),
      status: 'queued',
      title: input.title ?? { deploy: 'Deploy', redeploy: 'Redeploy', rollback: 'Rollback' }[input.how],
      image: input.image ?? null,
      previewDeploymentId: input.previewDeploymentId ?? null,
      commit: input.commit ?? null,
      description: input.description ?? null,
      reason: null,
      startedAt: null,
      finishedAt: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The dotenv texts (opened) a service's variables are resolved from: its own, its environment's, its project's. */
export function envSourcesOf(
  secrets: ServiceDeps['secrets'],
  { row, environment, project }: { row: { env: string | null }; environment: Environment; project: Project },
): ServiceEnvSources {
  const open = (sealed: string | null) => (sealed ? secrets.open(sealed) : '');
  return { service: open(row.env), environment: open(environment.env), project: open(project.env) };
}
