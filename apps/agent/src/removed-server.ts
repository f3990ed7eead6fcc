/**
 * What the agent of a removed server does to the machine before it stops (the control plane
 * says which, from `server.remove`'s `workloads`): `none` removes its proxy container, which
 * routed what is no longer wanted; `remove` removes every service and container Skiff
 * labelled (its proxy container among them), leaving the workloads' volumes and images, and
 * the server registry with its network, secrets and volumes (server-registry-teardown.ts);
 * `leaveRunning`
 * touches nothing. Each removal is logged; one that fails is logged and the rest go on.
 */
import type { RemovedServerWorkloads } from '@skiff/domain';
import type { Logger } from 'pino';
import { MANAGED_LABEL, type DockerDriver } from './docker/driver.js';
import type { RegistryRemoval } from './deployments/server-registry-teardown.js';

type Driver = Pick<DockerDriver, 'removeContainer' | 'servicesByLabel' | 'removeService' | 'containersByLabel'>;

export async function leaveMachine(
  driver: Driver,
  log: Logger,
  workloads: RemovedServerWorkloads,
  proxyContainer: string,
  removeServerRegistry?: () => Promise<RegistryRemoval>,
): Promise<void> {
  if (workloads === 'leaveRunning') {
    log.info('workloads and the proxy container are left running, as server.remove asked');
    return;
  }
  const attempt = async (what: Record<string, string>, remove: () => Promise<boolean>) => {
    try {
      log.info({ ...what, removed: await remove() }, `${Object.keys(what)[0]} removed`);
    } catch (err) {
      log.error({ ...what, err: err instanceof Error ? err.message : String(err) }, `could not remove the ${Object.keys(what)[0]}`);
    }
  };
  try {
    const gone = await driver.removeContainer(proxyContainer);
    log.info({ container: proxyContainer, removed: gone }, gone ? 'proxy container removed' : 'no proxy container to remove');
  } catch (err) {
    log.error({ container: proxyContainer, err: err instanceof Error ? err.message : String(err) }, 'could not remove the proxy container');
  }
  if (workloads !== 'remove') return;
  const managed = { [MANAGED_LABEL]: 'true' };
  for (const service of await driver.servicesByLabel(managed)) await attempt({ service: service.name }, () => driver.removeService(service.name));
  for (const container of await driver.containersByLabel(managed)) await attempt({ container: container.id }, () => driver.removeContainer(container.id));
  if (removeServerRegistry) {
    const { removed, problems } = await removeServerRegistry();
    if (removed.length > 0) log.info({ removed }, 'the server registry is removed');
    for (const problem of problems) log.error({ problem }, 'could not remove part of the server registry');
  }
  log.info('the workloads Skiff ran here are removed (their volumes and images stay)');
}
