import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { CacheRecord } from './record.js';

export const move = defineContract({
  method: 'POST',
  summary: 'Move a cache instance to another environment',
  description:
    'The target is an environment of the same organization that the caller may see (any ' +
    'project); the instance keeps its server, appName and settings. Answers the moved instance.',
  input: z.object({ cacheId: Id, targetEnvironmentId: Id }),
  output: CacheRecord,
  example: { cacheId: 'cch_example', targetEnvironmentId: 'env_example' },
});
