import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the cache instance',
  description:
    'Queues the stop of its service (scaled to 0; data and settings kept); `applicationStatus` ' +
    'becomes `idle` once no task runs. BAD_REQUEST when it was never deployed.',
  input: z.object({ cacheId: RequiredId }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
