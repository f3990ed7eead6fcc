import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ConvertedCompose } from './deployed.js';

export const randomizeCompose = defineContract({
  method: 'POST',
  summary: 'Suffix the service, volume, network, config and secret names of the compose file',
  description:
    "Turns the stack's `randomize` setting on, with its `suffix` (set with compose.update; when it " +
    'is empty a random one is generated and saved), and answers the compose file as it will now be ' +
    'deployed (as `getConvertedCompose`). The stored file is not rewritten: the suffix is applied at ' +
    'each deploy, and never twice. References follow the renamed services; bind mounts and the ' +
    'platform network are unchanged. `compose.update` with `randomize: false` turns it off.',
  input: z.object({ composeId: RequiredId }),
  output: ConvertedCompose,
  example: { composeId: 'cmp_example' },
});
