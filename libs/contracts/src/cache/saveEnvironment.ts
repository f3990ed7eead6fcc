import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const saveEnvironment = defineContract({
  method: 'POST',
  summary: 'Save the environment variables of the cache instance',
  input: z.object({ cacheId: Id, env: z.string().nullable() }),
  output: Unspecified,
  example: { cacheId: 'cch_example', env: 'REDIS_ARGS=--maxmemory 256mb' },
});
