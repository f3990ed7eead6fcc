import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ConvertedCompose } from './deployed.js';

export const isolatedDeployment = defineContract({
  method: 'POST',
  summary: 'Give the stack its own network named after its appName',
  description:
    "Turns the stack's `isolatedDeployment` setting on and answers the compose file as it will now " +
    'be deployed (as `getConvertedCompose`): every service joins an external network named after ' +
    "the stack's `appName` (the agent creates it), keeping stacks from reaching each other; volumes " +
    'are suffixed only when `isolatedDeploymentsVolume` is set on the stack. The stored file is not ' +
    'rewritten. `compose.update` with `isolatedDeployment: false` turns it off.',
  input: z.object({ composeId: RequiredId }),
  output: ConvertedCompose,
  example: { composeId: 'cmp_example' },
});
