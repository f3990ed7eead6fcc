/**
 * Adopt-on-start (ARCHITECTURE.md "Processes"): a starting agent finds the workloads Skiff
 * runs on its engine by their labels and takes them as they are. Nothing is updated,
 * restarted or removed: the commands that come later act on them like on anything the
 * agent deployed itself.
 */
import type { Logger } from 'pino';
import { MANAGED_LABEL, type DockerDriver } from '../docker/driver.js';

export interface AdoptedWorkloads {
  total: number;
  /** Services by their `skiff.kind` label (`unlabelled` when it has none). */
  byKind: Record<string, number>;
}

/** Lists the Skiff services of the engine and logs how many there are by kind. Read-only. */
export async function adoptWorkloads(driver: Pick<DockerDriver, 'servicesByLabel'>, log: Logger): Promise<AdoptedWorkloads> {
  const services = await driver.servicesByLabel({ [MANAGED_LABEL]: 'true' });
  const byKind: Record<string, number> = {};
  for (const service of services) {
    const kind = service.labels['skiff.kind'] || 'unlabelled';
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  const adopted = { total: services.length, byKind };
  log.info({ workloads: adopted.total, byKind }, 'adopted the workloads running on this engine (left as they are)');
  return adopted;
}
