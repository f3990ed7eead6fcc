import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const move = defineContract({
  method: 'POST',
  summary: 'Move a compose stack to another environment',
  input: z.object({ composeId: Id, targetEnvironmentId: Id }),
  output: Unspecified,
  example: { composeId: 'cmp_example', targetEnvironmentId: 'env_example' },
});
