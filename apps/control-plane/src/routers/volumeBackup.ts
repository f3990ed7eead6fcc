import type { RouterHandlers } from '../http/context.js';
import type { VolumeBackups } from '../services/backups/index.js';

export const volumeBackupHandlers = (volumes: VolumeBackups): RouterHandlers<'volumeBackup'> => ({
  create: (input, { principal }) => volumes.create(principal, input),
  one: (input, { principal }) => volumes.one(principal, input.volumeBackupId),
  remove: (input, { principal }) => volumes.remove(principal, input.volumeBackupId),
  manualBackup: (input, { principal }) => volumes.manual(principal, input.volumeBackupId),
  restore: (input, { principal }) => volumes.restore(principal, input),
  oneRestore: (input, { principal }) => volumes.oneRestore(principal, input.restoreId),
});
