import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';

export const loadServices = defineContract({
  method: 'GET',
  summary: 'The service names of the compose file',
  description:
    '`cache` reads the stored compose file; `fetch` first fetches it from the source (a shallow ' +
    'clone of the git repository on the control plane, reading `composePath`) and stores it, as ' +
    '`fetchSourceType` does (a `raw` stack has nothing to fetch). Answers the service names as the ' +
    'stored file has them, in file order. An empty or invalid file is BAD_REQUEST naming ' +
    '`composeFile`; a failed fetch names the source field.',
  input: z.object({ composeId: RequiredId, type: z.enum(['fetch', 'cache']).default('cache') }),
  output: z.array(z.string()),
  example: { composeId: 'cmp_example', type: 'cache' },
});
