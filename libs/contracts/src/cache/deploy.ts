import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, Id } from '../primitives.js';

export const deploy = defineContract({
  method: 'POST',
  summary: 'Deploy the cache instance',
  input: z.object({ cacheId: Id }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
