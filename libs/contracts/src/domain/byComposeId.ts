import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const byComposeId = defineContract({
  method: 'GET',
  summary: 'The domains of a compose stack',
  input: z.object({ composeId: RequiredId }),
  output: z.array(Unspecified),
  example: { composeId: 'cmp_example' },
});
