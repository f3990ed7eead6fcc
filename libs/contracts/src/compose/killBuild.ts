import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const killBuild = defineContract({
  method: 'POST',
  summary: "Kill the stack's running deployment job",
  description:
    "Stops only this stack's running job; the deployment ends in error and queued jobs " +
    'stay queued.',
  input: z.object({ composeId: RequiredId }),
  output: Empty,
  example: { composeId: 'cmp_example' },
});
