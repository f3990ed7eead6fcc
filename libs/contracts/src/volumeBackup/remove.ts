import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VolumeBackupRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a volume backup schedule; its files stay in the bucket',
  input: z.object({ volumeBackupId: RequiredId }),
  output: VolumeBackupRecord,
  access: { grant: 'canCreateServices' },
  example: { volumeBackupId: 'vbk_example' },
  extension: true,
});
