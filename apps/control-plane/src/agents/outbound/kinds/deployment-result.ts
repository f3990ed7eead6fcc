import type { DeploymentStatus as StoredStatus } from '@skiff/db';
import { CommandStatus } from '@skiff/proto';
import { applicationStatusAfterCancel, applicationStatusFor, canMove } from '../../../services/deployments/deployment-status.js';
import { ownerOfDeployment, setDeployedStatus } from '../../../services/deployments/workloads.js';
import { recordDeploymentEnd } from '../../../services/events/deployment-events.js';
import type { CommandResultContext } from './kind.js';

/** Command results that end an unfinished deployment, and how. */
const DEPLOYMENT_END: Partial<Record<CommandStatus, StoredStatus>> = {
  [CommandStatus.COMMAND_STATUS_FAILED]: 'error',
  [CommandStatus.COMMAND_STATUS_EXPIRED]: 'error',
  [CommandStatus.COMMAND_STATUS_REJECTED]: 'error',
  [CommandStatus.COMMAND_STATUS_CANCELLED]: 'cancelled',
};

/**
 * The result of a deploy command (of an application or a compose stack): one that failed,
 * expired or was rejected ends its deployment in error (a cancelled one as cancelled) when the
 * agent's events have not ended it already, and moves the workload's status with it. A
 * success changes nothing here: the agent's events moved the deployment.
 */
export async function endDeployment({ tx, command, status, reason, at }: CommandResultContext): Promise<void> {
  const end = DEPLOYMENT_END[status];
  if (!end || !command.deploymentId) return;
  const d = await tx.selectFrom('deployments').selectAll().where('id', '=', command.deploymentId).forUpdate().executeTakeFirst();
  if (!d || !canMove(d.status, end)) return;
  await tx.updateTable('deployments').set({ status: end, reason, finishedAt: at }).where('id', '=', d.id).execute();
  const owner = ownerOfDeployment(d);
  const appStatus = end === 'cancelled' && d.status === 'running' ? await applicationStatusAfterCancel(tx, owner, d.id) : applicationStatusFor(end);
  if (appStatus) await setDeployedStatus(tx, d, appStatus);
  if (end === 'error') await recordDeploymentEnd(tx, d, end, at, reason);
}
