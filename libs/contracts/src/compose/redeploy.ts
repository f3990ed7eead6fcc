import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DeploymentRecord } from '../deployment/record.js';
import { RequiredId } from '../primitives.js';

export const redeploy = defineContract({
  method: 'POST',
  summary: 'Queue a fresh deployment of the stack, fetching its source again',
  description:
    'As `compose.deploy` (the deployment is titled "Redeploy"). Volumes keep their names and data ' +
    '(the conversion never adds a suffix twice) and bind-mounted directories are never wiped.',
  input: z.object({ composeId: RequiredId, title: z.string().optional(), description: z.string().optional() }),
  output: DeploymentRecord,
  example: { composeId: 'cmp_example' },
});
