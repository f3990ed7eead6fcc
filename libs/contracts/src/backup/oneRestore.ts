import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

export const oneRestore = defineContract({
  method: 'GET',
  summary: 'A restore of a database backup: its file, target (a database service, or a compose stack’s service), status and log',
  input: z.object({ restoreId: RequiredId }),
  output: z.object({
    restoreId: z.string(),
    backupId: z.string(),
    databaseId: z.string().nullable(),
    composeId: z.string().nullable(),
    serviceName: z.string().nullable(),
    key: z.string(),
    commandId: z.string(),
    status: z.enum(['running', 'done', 'error']),
    log: z.string().nullable(),
    createdAt: z.string(),
    finishedAt: z.string().nullable(),
  }),
  example: { restoreId: 'rst_example' },
});
