/**
 * An application's named volumes, made before its service so they carry its `skiff.*` labels
 * (a removal with `remove_volumes` finds them by those). A volume of the same name that is not
 * this application's (another workload's, or one Skiff did not make) is refused: a name must
 * not open another workload's data.
 */
import type { WorkloadSpecInput } from '@skiff/domain';
import { MANAGED_LABEL, type DockerDriver } from '../docker/driver.js';

/** The labels of an application's volumes. */
export const applicationVolumeLabels = (id: string) => ({ [MANAGED_LABEL]: 'true', 'skiff.kind': 'application', 'skiff.id': id });

/**
 * Why the volume (its labels, as the engine holds them) is not the application's to archive
 * or overwrite, or null. Only a volume made for that application (deploy's `claimVolumes`)
 * carries its labels: another workload's, a database's, Skiff's own or a hand-made volume
 * does not, whatever the command's name says.
 */
export function foreignVolume(volume: string, labels: Record<string, string>, applicationId: string): string | null {
  const own = Object.entries(applicationVolumeLabels(applicationId)).every(([k, v]) => labels[k] === v);
  return own ? null : `the volume ${volume} on this server is not this application’s (it was not made for it): only the application’s own volumes are backed up or restored`;
}

/** Null when every volume of the spec is the application's (made now if missing); else why not. */
export async function claimVolumes(driver: DockerDriver, input: Pick<WorkloadSpecInput, 'id' | 'volumes'>): Promise<string | null> {
  const volumes = input.volumes ?? [];
  if (volumes.length === 0) return null;
  const labels = applicationVolumeLabels(input.id);
  const own = new Set(await driver.volumesByLabel(labels));
  for (const { source } of volumes) {
    if (own.has(source)) continue;
    const made = await driver.ensureVolume(source, labels);
    if (!made.created) return `volume ${source} is not allowed for this application: choose another volumeName`;
    own.add(source);
  }
  return null;
}
