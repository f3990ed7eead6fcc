import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the services of the stack',
  input: z.object({ composeId: RequiredId }),
  output: Empty,
  example: { composeId: 'cmp_example' },
});
