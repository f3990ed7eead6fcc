import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the cache instance',
  input: z.object({ cacheId: RequiredId }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
