import type { RouterHandlers } from '../http/context.js';
import type { BackupFiles, BackupRunner, BackupService, BackupVerifications, DatabaseRestores } from '../services/backups/index.js';

export const backupHandlers = (backups: BackupService, runner: BackupRunner, restores: DatabaseRestores, verifications: BackupVerifications, files: BackupFiles): RouterHandlers<'backup'> => ({
  create: (input, { principal }) => backups.create(principal, input),
  one: (input, { principal }) => backups.one(principal, input.backupId),
  update: (input, { principal }) => backups.update(principal, input),
  remove: (input, { principal }) => backups.remove(principal, input.backupId),
  manualBackupWebServer: (input, { principal }) => runner.manualWebServer(principal, input.backupId),
  listBackupFiles: (input, { principal }) => files.list(principal, input.destinationId, input.search, input.serverId),
  manualBackupDbA: (input, { principal }) => runner.manualDatabase(principal, input.backupId, 'dbA'),
  manualBackupDbB: (input, { principal }) => runner.manualDatabase(principal, input.backupId, 'dbB'),
  manualBackupDbC: (input, { principal }) => runner.manualDatabase(principal, input.backupId, 'dbC'),
  manualBackupDbD: (input, { principal }) => runner.manualDatabase(principal, input.backupId, 'dbD'),
  manualBackupDbE: (input, { principal }) => runner.manualDatabase(principal, input.backupId, 'dbE'),
  manualBackupCompose: (input, { principal }) => runner.manualCompose(principal, input.backupId),
  restore: (input, { principal }) => restores.restore(principal, input),
  oneRestore: (input, { principal }) => restores.one(principal, input.restoreId),
  verify: (input, { principal }) => verifications.verify(principal, input),
  oneVerification: (input, { principal }) => verifications.one(principal, input.verificationId),
  verifications: (input, { principal }) => verifications.list(principal, input.backupId),
});

/** `user.getBackups` lists the organization's backups; merged into the user router's handlers. */
export const userBackupHandlers = (backups: BackupService): RouterHandlers<'user'> => ({
  getBackups: (_input, { principal }) => backups.ofOrganization(principal),
});
