import type { Db } from '@skiff/db';
import { WorkloadKind } from '@skiff/proto';
import { removalPending } from '../../agents/outbound/command-records.js';
import { workloadKey } from '../../agents/outbound/workload-key.js';
import { DomainError } from '../../errors.js';

/**
 * The kinds of workload that have deployments and lifecycle commands, and where each keeps
 * its record: the table, the deployments' column naming it, the wire kind of its commands,
 * and how messages name it.
 */
export type DeployedKind = 'application' | 'compose';

export const DEPLOYED_KINDS = {
  application: { table: 'applications', deploymentColumn: 'applicationId', wire: WorkloadKind.WORKLOAD_KIND_APPLICATION, label: 'application' },
  compose: { table: 'composeStacks', deploymentColumn: 'composeId', wire: WorkloadKind.WORKLOAD_KIND_COMPOSE, label: 'compose stack' },
} as const satisfies Record<DeployedKind, { table: 'applications' | 'composeStacks'; deploymentColumn: 'applicationId' | 'composeId'; wire: WorkloadKind; label: string }>;

/** One workload: its kind and record id. */
export interface WorkloadOwner {
  kind: DeployedKind;
  id: string;
}

/** The workload of a `<kind>:<id>` key, when it is a kind with deployments. */
export function ownerOfKey(key: string): WorkloadOwner | null {
  const at = key.indexOf(':');
  const kind = key.slice(0, at);
  const id = key.slice(at + 1);
  return at > 0 && id !== '' && kind in DEPLOYED_KINDS ? { kind: kind as DeployedKind, id } : null;
}

/** The workload a deployment row belongs to. */
export function ownerOfDeployment(d: { applicationId: string | null; composeId: string | null }): WorkloadOwner {
  if (d.composeId !== null) return { kind: 'compose', id: d.composeId };
  if (d.applicationId !== null) return { kind: 'application', id: d.applicationId };
  throw new Error('a deployment without its workload');
}

/** The deployments columns that name the owner (for an insert). */
export const deploymentOwnerColumns = (owner: WorkloadOwner) => ({
  applicationId: owner.kind === 'application' ? owner.id : null,
  composeId: owner.kind === 'compose' ? owner.id : null,
});

/** Sets the workload's `applicationStatus`. */
export async function setWorkloadStatus(tx: Db, owner: WorkloadOwner, status: 'idle' | 'running' | 'done' | 'error'): Promise<void> {
  const { table } = DEPLOYED_KINDS[owner.kind];
  await tx.updateTable(table as 'applications').set({ applicationStatus: status }).where('id', '=', owner.id).execute();
}

/**
 * Moves the status of what a deployment deployed: a preview's `previewStatus` for a preview's
 * deployment (its parent keeps its own), else the workload's `applicationStatus`.
 */
export async function setDeployedStatus(tx: Db, d: { applicationId: string | null; composeId: string | null; previewDeploymentId?: string | null }, status: 'idle' | 'running' | 'done' | 'error'): Promise<void> {
  if (d.previewDeploymentId) {
    await tx.updateTable('previewDeployments').set({ previewStatus: status }).where('id', '=', d.previewDeploymentId).execute();
    return;
  }
  await setWorkloadStatus(tx, ownerOfDeployment(d), status);
}

/** The workload's record (id, appName, serverId), locked for the rest of the transaction when `lock`. */
export async function workloadRow(tx: Db, owner: WorkloadOwner, lock = false) {
  const { table } = DEPLOYED_KINDS[owner.kind];
  let q = tx.selectFrom(table as 'applications').select(['id', 'appName', 'serverId']).where('id', '=', owner.id);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Whether a deploy of the workload was ever queued: only then may it have Docker objects. */
export async function wasDeployed(db: Db, owner: WorkloadOwner): Promise<boolean> {
  const column = DEPLOYED_KINDS[owner.kind].deploymentColumn;
  const row = await db.selectFrom('deployments').select('id').where(column, '=', owner.id).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** The record whose removal takes a workload's domains with it (one of ProxyConfig's RouteOwners). */
export type WorkloadRouteOwner = { applicationId: string } | { composeId: string };

/** Runs a delete of records carrying domains and queues the proxy configs that routed to them (ProxyConfig.removing). */
export interface RouteRemoval {
  removing(tx: Db, owner: WorkloadRouteOwner, remove: () => Promise<unknown>): Promise<number>;
}

/**
 * Locks the workload's row for the rest of the transaction, so the commands of one workload
 * are written one transaction after the other (the relay publishes them in the order of their
 * rows), and refuses new work while a delete is under way.
 */
export async function lockWorkloadForWork(tx: Db, owner: WorkloadOwner): Promise<void> {
  const row = await workloadRow(tx, owner, true);
  if (row && (await removalPending(tx, workloadKey(owner.kind, owner.id)))) {
    throw new DomainError('BAD_REQUEST', `${workloadTitle(owner.kind, row.appName)} is being deleted`);
  }
}

/** The record whose removal takes the workload's domains (and their routes) with it. */
export const routeOwner = (owner: WorkloadOwner): WorkloadRouteOwner =>
  owner.kind === 'application' ? { applicationId: owner.id } : { composeId: owner.id };

/** Deletes the workload's record (its domains and deployments go by cascade), queueing the proxy configs that routed to it. */
export async function deleteWorkloadRecord(tx: Db, owner: WorkloadOwner, proxy?: RouteRemoval): Promise<number> {
  const remove = () => tx.deleteFrom(DEPLOYED_KINDS[owner.kind].table as 'applications').where('id', '=', owner.id).execute();
  if (proxy) return proxy.removing(tx, routeOwner(owner), remove);
  await remove();
  return 0;
}

/** "Application web" / "Compose stack monitoring": how a message starts when it names the workload. */
export const workloadTitle = (kind: DeployedKind, appName: string) => {
  const label = DEPLOYED_KINDS[kind].label;
  return `${label[0]!.toUpperCase()}${label.slice(1)} ${appName}`;
};
