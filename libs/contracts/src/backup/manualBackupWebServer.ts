import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const manualBackupWebServer = defineContract({
  method: 'POST',
  summary: 'Run a backup of the platform itself (its database and proxy configuration) now',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { backupId: 'bkp_example' },
});
