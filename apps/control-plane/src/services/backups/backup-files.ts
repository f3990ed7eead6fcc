import { isAdmin } from '../../authz/policy.js';
import type { Principal } from '../../authz/principal.js';
import { DomainError, Forbidden } from '../../errors.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { BackupService } from './backups.js';
import type { DestinationService } from './destinations.js';
import { ownPrefix } from './object-names.js';
import type { BackupRunner } from './runner.js';
import type { VolumeBackups } from './volume-backups.js';

/**
 * `backup.listBackupFiles`. A destination is the organization's (its settings are the admins'),
 * and its bucket holds every backup written there, the platform's included: owners and admins
 * list any path of it; anyone else only inside the folder of a backup (database or volume) on
 * that destination they may see, so a member learns nothing of the services they were not granted.
 * `serverId` (the spec's) must name a server the caller may use, as every other operation's does
 * (another organization's answers as an unknown one); the listing is the destination's whichever
 * server is named: the control plane reads the bucket itself.
 */
export class BackupFiles {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly destinations: DestinationService,
    private readonly runner: BackupRunner,
    private readonly backups: BackupService,
    private readonly volumes: VolumeBackups,
    private readonly access: ServiceAccess,
  ) {}

  async list(p: Principal, destinationId: string, search: string, serverId?: string) {
    await this.access.checkServer(p, serverId);
    const destination = await this.destinations.find(p, destinationId);
    if (!isAdmin(p) && !(await this.reaches(p, destination.id, search))) {
      throw Forbidden('Only owners and admins list a whole destination: search must start with the folder of a backup you may see (<prefix><backupId>/)');
    }
    return this.runner.listFiles(p, destination.id, search);
  }

  /** Whether `search` lies in the folder of a backup on the destination that the caller may see. */
  private async reaches(p: Principal, destinationId: string, search: string): Promise<boolean> {
    const of = (table: 'backups' | 'volumeBackups') =>
      this.deps.db.selectFrom(table as 'backups').select(['id', 'prefix']).where('destinationId', '=', destinationId).where('organizationId', '=', p.organizationId).execute();
    const candidates = [
      ...(await of('backups')).map((r) => ({ ...r, find: () => this.backups.find(p, r.id) })),
      ...(await of('volumeBackups')).map((r) => ({ ...r, find: () => this.volumes.find(p, r.id) })),
    ].filter((r) => search.startsWith(ownPrefix(r.prefix, r.id)));
    for (const candidate of candidates) {
      try {
        await candidate.find();
        return true;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
      }
    }
    return false;
  }
}
