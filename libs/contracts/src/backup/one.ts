import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A backup schedule',
  input: z.object({ backupId: RequiredId }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
