import { cacheVolumeName } from '../caches/cache-spec.js';
import { databaseVolumeName } from '../databases/database-spec.js';
import type { QueuedRemoval } from '../shared/service-records.js';

/** Something a removal leaves on a server, and why. */
export interface KeptItem {
  kind: 'volume' | 'composeVolumes' | 'composeFiles';
  /** The volume's name; a Compose project's name (its volumes are `<name>_<volume>`); a folder under the agent's data directory. */
  name: string;
  /** The workload it belonged to. */
  appName: string;
  serverId: string | null;
  reason: string;
}

const KEPT_VOLUMES = 'volumes are kept unless deleteVolumes is true';

/** What the queued removals leave behind: the volumes (and a stack's bind-mounted files) of those that keep them. */
export function keptAfterRemoval(queued: readonly QueuedRemoval[]): KeptItem[] {
  return queued
    .filter((w) => !w.removeVolumes && w.kind !== 'application')
    .flatMap((w): KeptItem[] => {
      const where = { appName: w.appName, serverId: w.serverId };
      if (w.kind === 'cache') return [{ kind: 'volume', name: cacheVolumeName(w.id), ...where, reason: KEPT_VOLUMES }];
      if (w.kind === 'database') return [{ kind: 'volume', name: databaseVolumeName(w.id), ...where, reason: KEPT_VOLUMES }];
      return [
        { kind: 'composeVolumes', name: w.appName, ...where, reason: `the named volumes of Compose project ${w.appName}: ${KEPT_VOLUMES}` },
        {
          kind: 'composeFiles',
          name: `compose/${w.appName}/files`,
          ...where,
          reason: `the stack's bind-mounted data (when it has any), kept with its volumes: ${KEPT_VOLUMES}`,
        },
      ];
    });
}
