import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VolumeRestoreRecord } from './record.js';

export const restore = defineContract({
  method: 'POST',
  summary: 'Restore a file of a volume backup into a named volume',
  description:
    '`key` is one of the backup’s files (`backup.listBackupFiles`). `volumeName` (default: the ' +
    'backup’s own) must be a `volume` mount of the backup’s application. The volume is emptied, ' +
    'then the archive extracted into it, in a throw-away container. The agent refuses while a ' +
    'running container mounts the volume (stop the application first) unless `force` is true. ' +
    'Answers the queued restore; `volumeBackup.oneRestore` follows it.',
  input: z.object({ volumeBackupId: RequiredId, key: z.string().min(1), volumeName: z.string().min(1).nullable().optional(), force: z.boolean().optional() }),
  output: VolumeRestoreRecord,
  access: { grant: 'canCreateServices' },
  example: { volumeBackupId: 'vbk_example', key: 'volumes/vbk_example/2026-01-01T00-00-00-000Z.tar.gz' },
  extension: true,
});
