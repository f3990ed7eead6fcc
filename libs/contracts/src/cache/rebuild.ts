import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, Id } from '../primitives.js';

export const rebuild = defineContract({
  method: 'POST',
  summary: 'Recreate the cache instance from its image, discarding its data',
  input: z.object({ cacheId: Id }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
