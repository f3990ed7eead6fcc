import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a domain and its route',
  input: z.object({ domainId: RequiredId }),
  output: Unspecified,
  example: { domainId: 'dom_example' },
});
