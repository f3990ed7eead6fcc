import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const manualBackupDbD = defineContract({
  method: 'POST',
  summary: 'Run a backup of a dbD (MongoDB) database now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
