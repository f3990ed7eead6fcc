import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const loadServices = defineContract({
  method: 'GET',
  summary: 'The service names of the compose file',
  description: '`cache` reads the stored compose file; `fetch` fetches it from the source first.',
  input: z.object({ composeId: RequiredId, type: z.enum(['fetch', 'cache']).default('cache') }),
  output: Unspecified,
  example: { composeId: 'cmp_example', type: 'cache' },
});
