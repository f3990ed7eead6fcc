import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeB (GitLab) connection, without its secrets',
  input: z.object({ forgeBId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeBId: 'fgb_example' },
});
