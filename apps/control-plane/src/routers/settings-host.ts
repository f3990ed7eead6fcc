import type { RouterHandlers } from '../http/context.js';
import type { Principal } from '../authz/principal.js';
import { NotImplemented } from '../errors.js';
import type { CleanupKind, CleanupSchedules, HostCleanupService, PlatformUpdates } from '../services/host/index.js';
import { assertHostAuthority } from '../services/host/index.js';
import type { Db } from '@skiff/db';

/** Empties the stored monitoring data (the metrics store, when one is wired). */
export interface MonitoringStore {
  clean(): Promise<void>;
}

/** The settings operations that act on a whole host: cleanups, the daily schedule, restart and updates. */
export const hostSettingsHandlers = (
  db: Db,
  cleanup: HostCleanupService,
  schedules: CleanupSchedules,
  updates: PlatformUpdates,
  monitoring?: MonitoringStore,
): RouterHandlers<'settings'> => {
  const clean = (kind: CleanupKind) => (input: { serverId?: string }, { principal }: { principal: Principal }) => cleanup.clean(principal, kind, input);
  return {
    cleanUnusedImages: clean('cleanUnusedImages'),
    cleanStoppedContainers: clean('cleanStoppedContainers'),
    cleanContainerBuilder: clean('cleanContainerBuilder'),
    cleanContainerPrune: clean('cleanContainerPrune'),
    cleanUnusedVolumes: clean('cleanUnusedVolumes'),
    cleanAll: clean('cleanAll'),
    updateContainerCleanup: (input, { principal }) => schedules.update(principal, input),
    cleanMonitoring: async (_input, { principal }) => {
      await assertHostAuthority(db, principal, undefined);
      if (!monitoring) throw NotImplemented('settings.cleanMonitoring (no metrics store yet)');
      await monitoring.clean();
      return {};
    },
    getUpdateData: (_input, { principal }) => updates.getUpdateData(principal),
    reloadServer: (_input, { principal }) => updates.reloadServer(principal),
    updateServer: (_input, { principal }) => updates.updateServer(principal),
  };
};
