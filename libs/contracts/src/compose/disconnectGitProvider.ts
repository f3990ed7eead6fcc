import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ComposeRecord } from './record.js';

export const disconnectGitProvider = defineContract({
  method: 'POST',
  summary: 'Detach the stack from its git or forge source',
  description:
    'Clears every source field (forge connections, repository, branch, git URL and SSH key, ' +
    'watch paths) and sets `sourceType` back to `raw`; the stored compose file stays.',
  input: z.object({ composeId: RequiredId }),
  output: ComposeRecord,
  example: { composeId: 'cmp_example' },
});
