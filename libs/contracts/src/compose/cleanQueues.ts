import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const cleanQueues = defineContract({
  method: 'POST',
  summary: 'Remove the waiting deployment jobs of the stack',
  input: z.object({ composeId: RequiredId }),
  output: Empty,
  example: { composeId: 'cmp_example' },
});
