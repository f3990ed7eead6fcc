/**
 * After a deploy is cancelled, the version that ran before keeps serving (proto
 * CancelWorkload: "whatever ran before keeps running"). Looks at the workload's service:
 *
 * - no service, or one that does not carry this deployment (`skiff.deployment` label): the
 *   deploy was cancelled before it wrote its spec (during the build or the pull), so the
 *   engine never began an update; nothing is touched;
 * - it carries this deployment and has a previous spec: the engine's update has begun (or
 *   even ended): the engine's own rollback puts the previous spec back, and rolls the
 *   tasks back with the service's rollback config; with `start-first` updates the old
 *   tasks still run while the new ones start, so they keep serving throughout;
 * - it carries this deployment and has no previous spec: this deployment created it
 *   (the first deploy): nothing ran before, so the service is removed and nothing of the
 *   cancelled version is left running.
 *
 * Answers log lines saying what was done. An engine error is reported as a line (the
 * deployment still ends cancelled, and the next deploy writes its own spec).
 */
import type { DockerDriver } from '../docker/driver.js';
import { DockerError } from '../docker/errors.js';
import { DEPLOYMENT_LABEL } from './deploy-spec.js';

export interface CancelledRollout {
  /** The Swarm service name (the workload's appName). */
  appName: string;
  /** The workload id (`skiff.id` label). */
  workloadId: string;
  deploymentId: string;
}

export async function undoRollout(driver: Pick<DockerDriver, 'servicesByLabel' | 'rollbackService' | 'removeService'>, rollout: CancelledRollout): Promise<string[]> {
  const { appName, deploymentId } = rollout;
  try {
    const services = await driver.servicesByLabel({ 'skiff.managed': 'true', 'skiff.id': rollout.workloadId });
    const service = services.find((s) => s.name === appName);
    if (!service) return [`Service ${appName} was not created: nothing to undo`];
    if (service.labels[DEPLOYMENT_LABEL] !== deploymentId) {
      return [`Service ${appName} was not changed by this deployment: the version it ran keeps running`];
    }
    switch (await driver.rollbackService(appName)) {
      case 'rolled-back':
        return [`Rolling service ${appName} back to the version it ran before (the engine's rollback)`];
      case 'no-previous-version':
        await driver.removeService(appName);
        return [`Removed service ${appName}: this deployment had created it and nothing ran before`];
      case 'missing':
        return [`Service ${appName} is gone: nothing to undo`];
    }
  } catch (err) {
    if (!(err instanceof DockerError)) throw err;
    return [`Could not restore the previous version of ${appName}: ${err.message}`];
  }
}
