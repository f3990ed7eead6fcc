import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CacheRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A cache instance with its settings',
  input: z.object({ cacheId: RequiredId }),
  output: CacheRecord,
  example: { cacheId: 'cch_example' },
});
