import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const cancelDeployment = defineContract({
  method: 'POST',
  summary: "Cancel the stack's running deployment",
  description:
    "Stops only this stack's running job and marks the deployment cancelled; queued jobs " +
    'stay queued.',
  input: z.object({ composeId: RequiredId }),
  output: Empty,
  example: { composeId: 'cmp_example' },
});
