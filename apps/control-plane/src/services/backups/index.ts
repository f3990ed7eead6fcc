// Backups and their destinations.
// What routers and the composition root use; services import each other's files directly.
export { BackupFiles } from './backup-files.js';
export { BackupService } from './backups.js';
export { DestinationService } from './destinations.js';
export { BackupRunner } from './runner.js';
export { BackupScheduler } from './scheduler.js';
export { DatabaseRestores } from './restores.js';
export { BackupVerifications } from './verifications.js';
export { VolumeBackups } from './volume-backups.js';
