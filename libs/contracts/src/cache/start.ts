import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the cache instance',
  description:
    'Queues the start of its stopped service; `applicationStatus` becomes `done` once its task ' +
    'runs (`error` if it fails). BAD_REQUEST when it was never deployed.',
  input: z.object({ cacheId: RequiredId }),
  output: Empty,
  example: { cacheId: 'cch_example' },
});
