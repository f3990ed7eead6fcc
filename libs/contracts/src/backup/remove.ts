import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { BackupRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a backup schedule (files already stored are kept)',
  description: 'Answers the removed backup.',
  input: z.object({ backupId: Id }),
  output: BackupRecord,
  example: { backupId: 'bkp_example' },
});
