import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, KeepLatestCount } from '../primitives.js';
import { VolumeBackupRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Schedule backups of a named volume of an application',
  description:
    '`volumeName` must be the volume of one of the application’s `volume` mounts (`mounts.create`). ' +
    'Each run archives the volume (tar, gzipped) on the agent of the application’s server, in a ' +
    'throw-away container that mounts it read-only, into `<prefix><volumeBackupId>/<time>.tar.gz` of ' +
    'the destination. `schedule`, `prefix`, `keepLatestCount` and `enabled` as in `backup.create`.',
  input: z.object({
    applicationId: RequiredId,
    volumeName: NonEmpty,
    destinationId: RequiredId,
    schedule: z.string(),
    prefix: NonEmpty,
    keepLatestCount: KeepLatestCount.nullable().optional(),
    enabled: z.boolean().nullable().optional(),
  }),
  output: VolumeBackupRecord,
  access: { grant: 'canCreateServices' },
  example: { applicationId: 'app_example', volumeName: 'notes-data', destinationId: 'dst_example', schedule: '0 3 * * *', prefix: 'volumes/', keepLatestCount: 7 },
  extension: true,
});
