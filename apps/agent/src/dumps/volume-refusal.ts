import type { S3Object, VolumeTarget } from '@skiff/proto';

/** Docker's volume name grammar. */
const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,254}$/;

/** Why a BackupVolume or RestoreVolume cannot run at all, or null. */
export function refuseVolumeCommand(target: VolumeTarget | undefined, object: S3Object | undefined): string | null {
  if (!target?.workload?.appName || !target.workload.id) return 'the command names no workload';
  if (!VOLUME_NAME.test(target.volumeName)) return 'the command names no valid volume';
  if (!object?.endpoint || !object.bucket || !object.key) return 'the command names no bucket object';
  return null;
}

