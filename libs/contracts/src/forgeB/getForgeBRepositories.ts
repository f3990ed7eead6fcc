import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const getForgeBRepositories = defineContract({
  method: 'GET',
  summary: 'The repositories reachable through a forgeB (GitLab) connection',
  input: z.object({ forgeBId: RequiredId }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeBId: 'fgb_example' },
});
