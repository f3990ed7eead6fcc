import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/** A volume backup schedule as responses show it. */
export const VolumeBackupRecord = z.object({
  volumeBackupId: z.string(),
  organizationId: z.string(),
  applicationId: z.string(),
  volumeName: z.string().describe('the Docker volume of one of the application’s `volume` mounts'),
  destinationId: z.string(),
  schedule: z.string().describe('cron expression'),
  enabled: z.boolean(),
  prefix: z.string().describe('folder inside the bucket, normalised as backups’ prefixes are'),
  keepLatestCount: z.number().int().nullable().describe('newest files of this backup kept; null keeps all'),
  lastSuccessAt: Timestamp.nullable(),
  createdAt: Timestamp,
});

export const VolumeRestoreRecord = z.object({
  restoreId: z.string(),
  volumeBackupId: z.string(),
  volumeName: z.string(),
  key: z.string(),
  commandId: z.string(),
  status: z.enum(['running', 'done', 'error']),
  log: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
});

export const VolumeRunResult = z.object({ volumeBackupId: z.string(), files: z.array(z.string()), size: z.number(), durationMs: z.number() });
