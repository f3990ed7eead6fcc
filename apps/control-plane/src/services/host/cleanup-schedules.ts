import { LOCAL_SERVER_ID } from '@skiff/domain';
import type { Principal } from '../../authz/principal.js';
import type { ServiceDeps } from '../shared/deps.js';
import type { PlatformSettingsService } from '../settings/platform-settings.js';
import { assertHostAuthority } from './host-authority.js';

export const CLEANUP_PERIOD_MS = 24 * 3600_000;

/**
 * The daily container cleanup of each server (table cleanup_schedules;
 * settings.updateContainerCleanup). The platform host's switch also stays in the host
 * settings, which answer it.
 */
export class CleanupSchedules {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly hostSettings: Pick<PlatformSettingsService, 'updateContainerCleanup'>,
  ) {}

  async update(p: Principal, input: { enableContainerCleanup: boolean; serverId?: string }) {
    if (input.serverId === undefined || input.serverId === LOCAL_SERVER_ID) {
      // Checks the platform administrator and answers the host settings.
      const record = await this.hostSettings.updateContainerCleanup(p, { enableContainerCleanup: input.enableContainerCleanup });
      await this.set(LOCAL_SERVER_ID, input.enableContainerCleanup);
      return record;
    }
    const serverId = await assertHostAuthority(this.deps.db, p, input.serverId);
    await this.set(serverId, input.enableContainerCleanup);
    return { serverId, enableContainerCleanup: input.enableContainerCleanup };
  }

  private async set(serverId: string, enabled: boolean): Promise<void> {
    const now = this.deps.clock();
    await this.deps.db
      .insertInto('cleanupSchedules')
      .values({ serverId, enabled, updatedAt: now })
      .onConflict((oc) => oc.column('serverId').doUpdateSet({ enabled, updatedAt: now }))
      .execute();
  }

  /**
   * Claims the servers whose daily cleanup is due (on, and not run for a day) by moving their
   * `last_run_at` to now in one UPDATE: a second control plane doing the same at the same time
   * waits for the rows and then finds them not due, so each run is claimed once. A claimed run
   * that fails waits for the next day. Schedules of removed servers are never due.
   */
  async claimDue(): Promise<string[]> {
    const now = this.deps.clock();
    const dueBefore = new Date(now.getTime() - CLEANUP_PERIOD_MS);
    const rows = await this.deps.db
      .updateTable('cleanupSchedules')
      .set({ lastRunAt: now })
      .where('enabled', '=', true)
      .where((eb) => eb.or([eb('lastRunAt', 'is', null), eb('lastRunAt', '<=', dueBefore)]))
      .where((eb) => eb.or([eb('serverId', '=', LOCAL_SERVER_ID), eb('serverId', 'in', eb.selectFrom('servers').select('id'))]))
      .returning('serverId')
      .execute();
    return rows.map((r) => r.serverId).sort();
  }

  /** Forgets the schedule of a removed server. */
  async forget(serverId: string): Promise<void> {
    await this.deps.db.deleteFrom('cleanupSchedules').where('serverId', '=', serverId).execute();
  }
}

