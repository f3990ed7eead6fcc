import type { Db } from '@skiff/db';
import { Invalid } from '../../errors.js';
import { serviceTables } from '../shared/service-records.js';

/**
 * One answer for every volume name an application may not mount, whatever the reason, so a
 * refusal does not tell whether another organization's workload has a volume of that name.
 */
export const VOLUME_NAME_REFUSED = "is not allowed: it is Skiff's own, or another workload's on this server could have it; choose another name (e.g. starting with this application's appName)";

/**
 * Refuses, naming `field`, a volume name another workload of the application's server uses
 * or could use: a name another application's mount gives, a name of the volumes Skiff makes
 * from a workload's appName (a database's, a cache's, a compose stack's `<appName>_<volume>`:
 * the appName itself or it followed by `-`, `_` or `.`), and Skiff's own (`skiff…`). The agent
 * refuses a volume not made for the application again at deploy.
 */
export async function assertVolumeNameAllowed(db: Db, app: { id: string; appName: string; serverId: string | null }, volumeName: string, field = 'volumeName'): Promise<void> {
  const name = volumeName.toLowerCase();
  if (name.startsWith('skiff')) throw Invalid(field, VOLUME_NAME_REFUSED);
  const onServer = <Q extends { where: (...a: any[]) => Q }>(q: Q): Q => (app.serverId === null ? q.where('serverId', 'is', null) : q.where('serverId', '=', app.serverId));
  const mounted = await onServer(
    db
      .selectFrom('applicationMounts')
      .innerJoin('applications', 'applications.id', 'applicationMounts.applicationId')
      .select('applicationMounts.id')
      .where('applicationMounts.type', '=', 'volume')
      .where('applicationMounts.volumeName', '=', volumeName)
      .where('applications.id', '!=', app.id) as any,
  ).executeTakeFirst();
  if (mounted) throw Invalid(field, VOLUME_NAME_REFUSED);
  for (const { table } of Object.values(serviceTables)) {
    const names = await onServer(db.selectFrom(table).select('appName').where('id', '!=', app.id) as any).execute() as { appName: string }[];
    if (names.some(({ appName }) => claims(appName.toLowerCase(), name))) throw Invalid(field, VOLUME_NAME_REFUSED);
  }
}

/** Whether a volume named `name` may be one Skiff makes for the workload `appName`. */
function claims(appName: string, name: string): boolean {
  return name === appName || (name.startsWith(appName) && '-_.'.includes(name[appName.length]));
}
