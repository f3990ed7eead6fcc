import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CancelResult } from './cancel-result.js';

export const cleanQueues = defineContract({
  method: 'POST',
  summary: 'Remove the waiting jobs of the application',
  description:
    "Removes every job of the application's queue that does not run yet: deployments (they end " +
    '`cancelled`, reason `removed from the queue by the user`) and queued stop, start, reload or delete ' +
    'jobs (dropped; the application keeps its status). The running job is not touched. Those that have ' +
    'not reached the server are removed at once; those its agent holds are removed by the agent, which ' +
    'records it so they never run, also after a restart. An agent that does not answer within 5 s is ' +
    'BAD_REQUEST naming the server (the jobs it holds stay queued). Nothing waiting is BAD_REQUEST.',
  input: z.object({ applicationId: RequiredId }),
  output: CancelResult,
  example: { applicationId: 'app_example' },
  extension: true,
});
