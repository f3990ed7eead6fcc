import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const move = defineContract({
  method: 'POST',
  summary: 'Move a cache instance to another environment',
  input: z.object({ cacheId: Id, targetEnvironmentId: Id }),
  output: Unspecified,
  example: { cacheId: 'cch_example', targetEnvironmentId: 'env_example' },
});
