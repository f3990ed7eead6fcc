import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const redeploy = defineContract({
  method: 'POST',
  summary: 'Queue a fresh deployment of the stack, fetching its source again',
  input: z.object({ composeId: RequiredId }),
  output: Empty,
  example: { composeId: 'cmp_example' },
});
