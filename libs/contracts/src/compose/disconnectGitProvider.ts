import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const disconnectGitProvider = defineContract({
  method: 'POST',
  summary: 'Detach the stack from its git or forge source',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
