import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { VerificationRecord } from './verification-record.js';

export const verifications = defineContract({
  method: 'GET',
  summary: 'The verifications of a backup, newest first (the newest 20)',
  description: 'On demand (`backup.verify`, trigger `manual`) and after scheduled runs (trigger `scheduled`).',
  input: z.object({ backupId: RequiredId }),
  output: z.object({ verifications: z.array(VerificationRecord) }),
  example: { backupId: 'bkp_example' },
});
