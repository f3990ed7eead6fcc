import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { CacheRecord } from './record.js';

export const saveEnvironment = defineContract({
  method: 'POST',
  summary: 'Save the environment variables of the cache instance',
  input: z.object({ cacheId: Id, env: z.string().nullable() }),
  output: CacheRecord,
  example: { cacheId: 'cch_example', env: 'REDIS_ARGS=--maxmemory 256mb' },
});
