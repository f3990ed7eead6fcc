import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const refreshToken = defineContract({
  method: 'POST',
  summary: 'Generate a new webhook token for the stack',
  description:
    'The previous deploy-webhook address stops working; the answer carries the new token.',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
