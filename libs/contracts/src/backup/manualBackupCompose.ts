import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const manualBackupCompose = defineContract({
  method: 'POST',
  summary: 'Run a backup of a database inside a compose stack now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
