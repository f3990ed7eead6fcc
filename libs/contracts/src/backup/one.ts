import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { BackupRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A backup schedule',
  description: 'Visible to whoever may see its target service; platform (web-server) backups to admins.',
  input: z.object({ backupId: RequiredId }),
  output: BackupRecord,
  example: { backupId: 'bkp_example' },
});
