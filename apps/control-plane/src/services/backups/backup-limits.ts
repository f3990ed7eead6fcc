import type { Db } from '@skiff/db';
import { Invalid } from '../../errors.js';
import { lockUntilCommit } from '../shared/xact-lock.js';

/**
 * How many backup schedules one organization keeps (database, compose and volume backups
 * together: `SKIFF_MAX_BACKUPS_PER_ORGANIZATION`) and one target keeps (a database service, a
 * compose stack's service, an application's volume: `SKIFF_MAX_BACKUPS_PER_TARGET`). The
 * scheduler runs an organization's backups one after the other: without a bound, one
 * organization's thousands of schedules would hold the scheduler's time.
 */
export interface BackupLimits {
  perOrganization: number;
  perTarget: number;
}

export const DEFAULT_BACKUP_LIMITS: BackupLimits = { perOrganization: 100, perTarget: 10 };

type Target =
  | { table: 'backups'; column: 'dbAId' | 'dbBId' | 'dbCId' | 'dbDId' | 'dbEId' | 'composeId'; id: string; field: string; serviceName?: string | null }
  | { table: 'backups'; column: null; field: string }
  | { table: 'volumeBackups'; column: 'applicationId'; id: string; field: string; volumeName: string };

/**
 * Refuses, naming the target's field, a new backup over either limit. Run in the transaction
 * `db` that inserts it: the organization's backups are locked until that insert commits, so two
 * creates at the limit cannot both pass. `adds: false`: an existing backup moves to `target`
 * (an update naming another service of its stack), so only the target's limit applies.
 */
export async function assertBackupRoom(db: Db, limits: BackupLimits, organizationId: string, target: Target, { adds = true } = {}): Promise<void> {
  await lockUntilCommit(db, `skiff.backup-room:${organizationId}`);
  const count = async (table: 'backups' | 'volumeBackups', where: (q: any) => any) =>
    Number((await where(db.selectFrom(table as 'backups').select((eb) => eb.fn.countAll().as('n')).where('organizationId', '=', organizationId)).executeTakeFirstOrThrow()).n);
  const all = adds ? (await count('backups', (q) => q)) + (await count('volumeBackups', (q) => q)) : 0;
  if (adds && all >= limits.perOrganization) {
    throw Invalid(target.field, `this organization already keeps ${all} backups, the most allowed (SKIFF_MAX_BACKUPS_PER_ORGANIZATION is ${limits.perOrganization}): remove one first`);
  }
  if (target.column === null) return;
  const same =
    target.table === 'volumeBackups'
      ? await count('volumeBackups', (q) => q.where('applicationId', '=', target.id).where('volumeName', '=', target.volumeName))
      : await count('backups', (q) => {
          const of = q.where(target.column, '=', target.id);
          return target.column === 'composeId' ? of.where('serviceName', '=', target.serviceName ?? '') : of;
        });
  if (same >= limits.perTarget) {
    throw Invalid(target.field, `already has ${same} backups, the most allowed for one target (SKIFF_MAX_BACKUPS_PER_TARGET is ${limits.perTarget}): remove one first`);
  }
}
