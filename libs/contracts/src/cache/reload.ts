import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AppName, Empty, Id } from '../primitives.js';

export const reload = defineContract({
  method: 'POST',
  summary: 'Restart the cache instance',
  input: z.object({ cacheId: Id, appName: AppName }),
  output: Empty,
  example: { cacheId: 'cch_example', appName: 'shop-sessions' },
});
