import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove the cache instance with its container and data volume',
  input: z.object({ cacheId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canDeleteServices' },
  example: { cacheId: 'cch_example' },
});
