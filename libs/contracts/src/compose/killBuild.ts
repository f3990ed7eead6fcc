import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CancelResult } from '../application/cancel-result.js';
import { RequiredId } from '../primitives.js';

export const killBuild = defineContract({
  method: 'POST',
  summary: "Kill the stack's running deployment job",
  description:
    "Stops this stack's running deployment only while it fetches, pulls or builds (the deployment " +
    'ends `cancelled`, the running containers are left as they were); queued jobs stay queued. A ' +
    'current job that is not a deployment is BAD_REQUEST.',
  input: z.object({ composeId: RequiredId }),
  output: CancelResult,
  example: { composeId: 'cmp_example' },
});
