/** The Swarm services of a stack (by Skiff's labels, which deployed-file.ts puts under `deploy.labels`) with their tasks. */
import { MANAGED_LABEL, type DockerDriver } from '../docker/driver.js';
import type { StackServiceState } from './readiness.js';

export const composeLabels = (id: string) => ({ [MANAGED_LABEL]: 'true', 'skiff.kind': 'compose', 'skiff.id': id });

export async function stackServiceStates(driver: DockerDriver, id: string): Promise<StackServiceState[]> {
  const services = await driver.servicesByLabel(composeLabels(id));
  return Promise.all(services.map(async (info) => ({ info, tasks: await driver.serviceTasks(info.name) })));
}
