import type { Logger } from 'pino';
import type { EventSignal } from '../events/events.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ServiceDeps } from '../shared/deps.js';
import { BackupService } from './backups.js';
import { DestinationService } from './destinations.js';
import { BackupRunner, type PlatformSource } from './runner.js';
import { BackupScheduler } from './scheduler.js';

/** `start: false` runs no scheduler in this process (tests drive `scheduler.tick()`). */
export interface BackupOptions {
  start?: boolean;
  tickMs?: number;
}

/** Destinations, backup records, the runner and the (not yet started) scheduler, for the composition root. */
export function buildBackups(deps: ServiceDeps, access: ServiceAccess, signal: EventSignal, platform: PlatformSource, log: Logger, options: BackupOptions = {}) {
  const destinations = new DestinationService(deps);
  const backups = new BackupService(deps, access, destinations);
  const runner = new BackupRunner(deps, backups, destinations, signal, platform, log.child({ component: 'backups' }));
  const scheduler = new BackupScheduler(deps.db, deps.clock, (row) => runner.run(row), log.child({ component: 'backup-scheduler' }), options.tickMs);
  return { destinations, backups, runner, scheduler, start: options.start !== false };
}
