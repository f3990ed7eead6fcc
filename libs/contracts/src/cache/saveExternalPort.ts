import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const saveExternalPort = defineContract({
  method: 'POST',
  summary: 'Publish the cache instance on a host port, or stop publishing it (null)',
  input: z.object({ cacheId: Id, externalPort: z.number().nullable() }),
  output: Unspecified,
  example: { cacheId: 'cch_example', externalPort: 6380 },
});
