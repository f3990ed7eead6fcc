import { z } from 'zod';
import { defineContract } from '../contract.js';
import { BackupRecord } from '../backup/record.js';

export const getBackups = defineContract({
  method: 'GET',
  summary: 'The backups of the organization',
  description:
    'Every backup schedule of the caller\'s organization, whatever its target (databases, ' +
    'compose stacks and the platform backup), oldest first.',
  input: z.object({}),
  output: z.array(BackupRecord),
  access: { role: 'admin' },
  example: {},
});
