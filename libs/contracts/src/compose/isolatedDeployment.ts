import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const isolatedDeployment = defineContract({
  method: 'POST',
  summary: 'Give the stack its own network named after its appName',
  description:
    'Rewrites the compose file so every service joins an external network named after the ' +
    "stack's `appName`, keeping stacks from reaching each other; volumes are suffixed only when " +
    '`isolatedDeploymentsVolume` is set on the stack. Answers the rewritten compose file.',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
