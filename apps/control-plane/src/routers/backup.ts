import type { RouterHandlers } from '../http/context.js';
import type { BackupRunner, BackupService } from '../services/backups/index.js';
import { NotImplemented } from '../errors.js';

/** Database dumps wait for the database services and the agent's dump command. */
const waitsForDatabaseServices = (operation: string) => () => {
  throw NotImplemented(`${operation} (database dumps run on the agent, which has no dump command yet)`);
};

export const backupHandlers = (backups: BackupService, runner: BackupRunner): RouterHandlers<'backup'> => ({
  create: (input, { principal }) => backups.create(principal, input),
  one: (input, { principal }) => backups.one(principal, input.backupId),
  update: (input, { principal }) => backups.update(principal, input),
  remove: (input, { principal }) => backups.remove(principal, input.backupId),
  manualBackupWebServer: (input, { principal }) => runner.manualWebServer(principal, input.backupId),
  listBackupFiles: (input, { principal }) => runner.listFiles(principal, input.destinationId, input.search),
  manualBackupDbA: waitsForDatabaseServices('backup.manualBackupDbA'),
  manualBackupDbB: waitsForDatabaseServices('backup.manualBackupDbB'),
  manualBackupDbC: waitsForDatabaseServices('backup.manualBackupDbC'),
  manualBackupDbD: waitsForDatabaseServices('backup.manualBackupDbD'),
  manualBackupCompose: waitsForDatabaseServices('backup.manualBackupCompose'),
});

/** `user.getBackups` lists the organization's backups; merged into the user router's handlers. */
export const userBackupHandlers = (backups: BackupService): RouterHandlers<'user'> => ({
  getBackups: (_input, { principal }) => backups.ofOrganization(principal),
});
