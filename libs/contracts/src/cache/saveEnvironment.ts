import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { CacheRecord } from './record.js';

export const saveEnvironment = defineContract({
  method: 'POST',
  summary: 'Save the environment variables of the cache instance',
  input: z.object({ cacheId: Id, env: z.string().nullable() }),
  output: CacheRecord,
  description: 'A dotenv text for the container; it applies at the next deploy. `REDIS_PASSWORD` is always the instance\'s password.',
  example: { cacheId: 'cch_example', env: 'TZ=Europe/Berlin' },
});
