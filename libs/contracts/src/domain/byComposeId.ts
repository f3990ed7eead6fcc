import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DomainRecord } from './record.js';

export const byComposeId = defineContract({
  method: 'GET',
  summary: 'The domains of a compose stack',
  description: 'Oldest first.',
  input: z.object({ composeId: RequiredId }),
  output: z.array(DomainRecord),
  example: { composeId: 'cmp_example' },
});
