import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VolumeBackupRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A volume backup schedule',
  input: z.object({ volumeBackupId: RequiredId }),
  output: VolumeBackupRecord,
  example: { volumeBackupId: 'vbk_example' },
  extension: true,
});
