import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ComposeRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A compose stack with its settings',
  input: z.object({ composeId: RequiredId }),
  output: ComposeRecord,
  example: { composeId: 'cmp_example' },
});
