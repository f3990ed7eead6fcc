import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A cache instance with its settings',
  input: z.object({ cacheId: RequiredId }),
  output: Unspecified,
  example: { cacheId: 'cch_example' },
});
