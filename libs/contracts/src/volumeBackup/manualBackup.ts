import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VolumeRunResult } from './record.js';

export const manualBackup = defineContract({
  method: 'POST',
  summary: 'Run a volume backup now',
  description: 'Answers when the archive is stored: its file, size and duration. A `volumeBackup` event records each run.',
  input: z.object({ volumeBackupId: RequiredId }),
  output: VolumeRunResult,
  example: { volumeBackupId: 'vbk_example' },
  extension: true,
});
