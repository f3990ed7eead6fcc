import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CancelResult } from '../application/cancel-result.js';
import { RequiredId } from '../primitives.js';

export const cancelDeployment = defineContract({
  method: 'POST',
  summary: "Cancel the stack's running deployment",
  description:
    "Stops only this stack's current job (its clone, pull, build or `up`) and marks the deployment " +
    '`cancelled`; queued jobs stay queued. A deployment that has not reached the server yet is ' +
    'cancelled at once. Nothing running or queued is BAD_REQUEST; so is an agent that does not answer ' +
    'within 5 s.',
  input: z.object({ composeId: RequiredId }),
  output: CancelResult,
  example: { composeId: 'cmp_example' },
});
