import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { CacheRecord } from './record.js';

export const saveExternalPort = defineContract({
  method: 'POST',
  summary: 'Publish the cache instance on a host port, or stop publishing it (null)',
  description:
    '`externalPort` is an integer from 1 to 65535, unique on the server among cache instances. ' +
    'A deployed instance is deployed again at once so the change applies (the same data; ' +
    '`applicationStatus` `running`, then `done` or `error`); otherwise it applies at its first deploy.',
  input: z.object({ cacheId: Id, externalPort: z.number().nullable() }),
  output: CacheRecord,
  example: { cacheId: 'cch_example', externalPort: 6380 },
});
