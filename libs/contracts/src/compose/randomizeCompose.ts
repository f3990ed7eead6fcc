import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const randomizeCompose = defineContract({
  method: 'POST',
  summary: 'Suffix the service, volume, network, config and secret names of the compose file',
  description:
    "Uses the stack's `suffix` (set with compose.update); when it is empty a random one is " +
    'generated and saved. References follow the renamed services; bind mounts and the platform ' +
    'network are unchanged. Applying it again with the same suffix changes nothing. Answers the ' +
    'rewritten compose file.',
  input: z.object({ composeId: RequiredId }),
  output: Unspecified,
  example: { composeId: 'cmp_example' },
});
