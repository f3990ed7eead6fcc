import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A domain',
  input: z.object({ domainId: RequiredId }),
  output: Unspecified,
  example: { domainId: 'dom_example' },
});
