import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CacheRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove the cache instance with its container and data volume',
  description: 'Answers the removed record.',
  input: z.object({ cacheId: RequiredId }),
  output: CacheRecord,
  access: { grant: 'canDeleteServices' },
  example: { cacheId: 'cch_example' },
});
