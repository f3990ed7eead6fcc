import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VolumeRestoreRecord } from './record.js';

export const oneRestore = defineContract({
  method: 'GET',
  summary: 'A restore of a volume backup: its file, volume, status and log',
  input: z.object({ restoreId: RequiredId }),
  output: VolumeRestoreRecord,
  example: { restoreId: 'vrs_example' },
  extension: true,
});
