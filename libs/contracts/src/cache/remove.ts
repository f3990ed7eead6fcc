import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CacheRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove the cache instance with its container and data volume',
  description:
    'Answers the removed record. An instance that was never deployed is removed at once; ' +
    'otherwise the agent removes its service and its data volume, and the record goes when ' +
    'it reports them gone. Until then new work on it is BAD_REQUEST and a repeated remove ' +
    'changes nothing; a failed removal leaves the record with `applicationStatus: error`.',
  input: z.object({ cacheId: RequiredId }),
  output: CacheRecord,
  access: { grant: 'canDeleteServices' },
  example: { cacheId: 'cch_example' },
});
