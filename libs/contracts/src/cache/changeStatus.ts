import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Status } from '../primitives.js';
import { CacheRecord } from './record.js';

export const changeStatus = defineContract({
  method: 'POST',
  summary: 'Set the status of the cache instance',
  input: z.object({ cacheId: Id, applicationStatus: Status }),
  output: CacheRecord,
  example: { cacheId: 'cch_example', applicationStatus: 'done' },
});
