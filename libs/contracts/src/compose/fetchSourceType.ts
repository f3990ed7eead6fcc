import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ComposeRecord } from './record.js';

export const fetchSourceType = defineContract({
  method: 'POST',
  summary: 'Fetch the compose file from the stack source',
  description:
    "Fetches the stack's compose file from its source and stores it as `composeFile`: for `git`, a " +
    'shallow clone of `customGitBranch` of `customGitUrl` on the control plane (with the SSH key of ' +
    '`customGitSSHKeyId`; at most 60 s), reading `composePath` (at most 1 MiB). Nothing to fetch for ' +
    '`raw` stacks; forge sources come with their integrations (BAD_REQUEST naming `sourceType`). A ' +
    "failed clone is BAD_REQUEST naming `customGitUrl` with git's reason; a missing file names " +
    '`composePath`. Answers the stack.',
  input: z.object({ composeId: RequiredId }),
  output: ComposeRecord,
  example: { composeId: 'cmp_example' },
});
