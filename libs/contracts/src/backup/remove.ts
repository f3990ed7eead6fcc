import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a backup schedule (files already stored are kept)',
  input: z.object({ backupId: Id }),
  output: Unspecified,
  example: { backupId: 'bkp_example' },
});
