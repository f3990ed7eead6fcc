import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DestinationRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a backup destination that no backup uses',
  description:
    'Answers the removed destination. Refused (BAD_REQUEST naming destinationId) while ' +
    'backups write to it: remove or move those backups first. Files already in the bucket are kept.',
  input: z.object({ destinationId: RequiredId }),
  output: DestinationRecord,
  access: { role: 'admin' },
  example: { destinationId: 'dst_example' },
  extension: true,
});
