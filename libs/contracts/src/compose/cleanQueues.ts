import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CancelResult } from '../application/cancel-result.js';
import { RequiredId } from '../primitives.js';

export const cleanQueues = defineContract({
  method: 'POST',
  summary: 'Remove the waiting deployment jobs of the stack',
  description:
    "Removes every job of the stack's queue that does not run yet: deployments (they end " +
    '`cancelled`) and queued stop, start or delete jobs (dropped; the stack keeps its status). The ' +
    "running job is not touched. An agent that does not answer within 5 s is BAD_REQUEST naming the " +
    'server. Nothing waiting is BAD_REQUEST.',
  input: z.object({ composeId: RequiredId }),
  output: CancelResult,
  example: { composeId: 'cmp_example' },
});
