import type { S3Object, VolumeTarget } from '@skiff/proto';
import { applicationVolumeLabels } from '../deployments/volume-claims.js';

/** Docker's volume name grammar. */
const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;

/** Why a BackupVolume or RestoreVolume cannot run at all, or null. */
export function refuseVolumeCommand(target: VolumeTarget | undefined, object: S3Object | undefined): string | null {
  if (!target?.workload?.appName) return 'the command names no workload';
  if (!target.workload.id) return 'the command names no workload';
  if (!VOLUME_NAME.test(target.volumeName)) return 'the command names no valid volume';
  if (!object?.endpoint || !object.bucket || !object.key) return 'the command names no bucket object';
  return null;
}

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
