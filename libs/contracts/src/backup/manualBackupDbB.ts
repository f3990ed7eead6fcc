import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const manualBackupDbB = defineContract({
  method: 'POST',
  summary: 'Run a backup of a dbB (MariaDB) database now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
