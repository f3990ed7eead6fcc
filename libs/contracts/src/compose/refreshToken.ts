import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ComposeRecord } from './record.js';

export const refreshToken = defineContract({
  method: 'POST',
  summary: 'Generate a new webhook token for the stack',
  description:
    'The previous deploy-webhook address stops working; the answer is the stack with its new ' +
    '`refreshToken` (random, encrypted at rest).',
  input: z.object({ composeId: RequiredId }),
  output: ComposeRecord,
  example: { composeId: 'cmp_example' },
});
