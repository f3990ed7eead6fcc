import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

/** Beyond the spec, which lists a manual run for dbA…dbD only: dbE's, alike. */
export const manualBackupDbE = defineContract({
  method: 'POST',
  summary: 'Run a backup of a dbE (libSQL) database now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
