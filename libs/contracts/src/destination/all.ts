import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DestinationRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every backup destination of the organization',
  description: 'Oldest first.',
  input: z.object({}),
  output: z.array(DestinationRecord),
  access: { role: 'admin' },
  example: {},
  extension: true,
});
