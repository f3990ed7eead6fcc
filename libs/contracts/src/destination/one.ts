import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DestinationRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A backup destination',
  input: z.object({ destinationId: RequiredId }),
  output: DestinationRecord,
  access: { role: 'admin' },
  example: { destinationId: 'dst_example' },
  extension: true,
});
