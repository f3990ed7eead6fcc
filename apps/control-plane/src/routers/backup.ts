import type { RouterHandlers } from '../http/context.js';
import type { BackupService } from '../services/backups/index.js';

export const backupHandlers = (backups: BackupService): RouterHandlers<'backup'> => ({
  create: (input, { principal }) => backups.create(principal, input),
  one: (input, { principal }) => backups.one(principal, input.backupId),
  update: (input, { principal }) => backups.update(principal, input),
  remove: (input, { principal }) => backups.remove(principal, input.backupId),
});

/** `user.getBackups` lists the organization's backups; merged into the user router's handlers. */
export const userBackupHandlers = (backups: BackupService): RouterHandlers<'user'> => ({
  getBackups: (_input, { principal }) => backups.ofOrganization(principal),
});
