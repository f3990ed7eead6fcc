import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const manualBackupDbC = defineContract({
  method: 'POST',
  summary: 'Run a backup of a dbC (MySQL) database now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
