import type { Backup, VolumeBackup } from '@skiff/db';
import type { Logger } from 'pino';
import type { CommandOutbox } from '../../agents/outbound/outbox.js';
import type { EventSignal } from '../events/events.js';
import type { ServiceAccess } from '../shared/service-access.js';
import type { ServiceDeps } from '../shared/deps.js';
import { type BackupLimits, DEFAULT_BACKUP_LIMITS } from './backup-limits.js';
import { BackupFiles } from './backup-files.js';
import { BackupService } from './backups.js';
import { DatabaseDumps } from './database-dumps.js';
import { DestinationService } from './destinations.js';
import { DatabaseRestores } from './restores.js';
import { BackupRunner, type PlatformSource } from './runner.js';
import { BackupRuns } from './runs.js';
import { BackupScheduler } from './scheduler.js';
import { BackupVerifications } from './verifications.js';
import { VolumeBackups } from './volume-backups.js';

/** `start: false` runs no scheduler in this process (tests drive `scheduler.tick()`). */
export interface BackupOptions {
  start?: boolean;
  tickMs?: number;
  /** How often a run waited for (database, compose, volume) looks at its row (tests: shorter). */
  dumpPollMs?: number;
  /** How long a run's record waits for its bucket (runs.ts BUCKET_TIMEOUT_MS; tests: shorter). */
  bucketTimeoutMs?: number;
  /** Backups kept per organization and per target (`SKIFF_MAX_BACKUPS_PER_ORGANIZATION`, `SKIFF_MAX_BACKUPS_PER_TARGET`). */
  limits?: Partial<BackupLimits>;
}

/** Destinations, backup records, the runner and its runs, restores, verifications and the (not yet started) scheduler, for the composition root. */
export function buildBackups(
  deps: ServiceDeps,
  access: ServiceAccess,
  outbox: CommandOutbox,
  signal: EventSignal,
  platform: PlatformSource,
  log: Logger,
  options: BackupOptions = {},
) {
  const limits: BackupLimits = { ...DEFAULT_BACKUP_LIMITS, ...options.limits };
  const destinations = new DestinationService(deps);
  const backups = new BackupService(deps, access, destinations, limits);
  const dumps = new DatabaseDumps(deps, outbox);
  const runs = new BackupRuns(deps, signal, log.child({ component: 'backup-runs' }), {}, options.dumpPollMs, options.bucketTimeoutMs);
  const runner = new BackupRunner(deps, backups, destinations, signal, platform, log.child({ component: 'backups' }), dumps, runs);
  const restores = new DatabaseRestores(deps, access, backups, runner, outbox);
  const volumes = new VolumeBackups(deps, access, destinations, runner, outbox, signal, log.child({ component: 'volume-backups' }), runs, limits);
  const files = new BackupFiles(deps, destinations, runner, backups, volumes, access);
  const volumeSchedules = { table: 'volumeBackups' as const, run: (row: VolumeBackup, runId?: string) => volumes.run(row, runId), staleKind: () => 'volumeBackup' as const };
  const verifications = new BackupVerifications(deps, backups, runner, outbox, log.child({ component: 'backup-verifications' }));
  // A run's record reads its stored object's size through the runner's buckets, and a successful
  // scheduled database run queues the verification of its file in the same transaction.
  runs.links.buckets = runner;
  runs.links.verifications = verifications;
  const scheduled = (row: Backup, runId?: string) => runner.run(row, runId);
  const scheduler = new BackupScheduler(deps.db, deps.clock, scheduled, log.child({ component: 'backup-scheduler' }), options.tickMs, [volumeSchedules], signal, runs);
  return { destinations, backups, runner, runs, files, restores, verifications, volumes, scheduler, start: options.start !== false };
}
