import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Status, Unspecified } from '../primitives.js';

export const changeStatus = defineContract({
  method: 'POST',
  summary: 'Set the status of the cache instance',
  input: z.object({ cacheId: Id, applicationStatus: Status }),
  output: Unspecified,
  example: { cacheId: 'cch_example', applicationStatus: 'done' },
});
