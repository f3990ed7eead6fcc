import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const fetchSourceType = defineContract({
  method: 'POST',
  summary: 'Fetch the compose file from the stack source',
  description:
    "Clones or downloads the stack's git or forge source and stores its compose file (at " +
    '`composePath`) on the stack. Nothing to fetch for `raw` stacks.',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
