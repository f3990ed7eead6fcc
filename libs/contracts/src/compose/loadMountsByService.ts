import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ComposeMount } from './deployed.js';

export const loadMountsByService = defineContract({
  method: 'GET',
  summary: 'The mounts of one service of the stack, as deployed',
  description:
    "The volumes, bind mounts and tmpfs mounts the service declares in the converted compose file " +
    '(`getConvertedCompose`), in file order, with the Docker volume each named volume is. ' +
    '`serviceName` may be the name in the stored file or the randomized one. A service the file does ' +
    'not define is BAD_REQUEST naming `serviceName`.',
  input: z.object({ composeId: RequiredId, serviceName: NonEmpty }),
  output: z.array(ComposeMount),
  example: { composeId: 'cmp_example', serviceName: 'grafana' },
});
