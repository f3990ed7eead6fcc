import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const getForgeCRepositories = defineContract({
  method: 'GET',
  summary: 'The repositories reachable through a forgeC (Bitbucket) connection',
  input: z.object({ forgeCId: RequiredId }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeCId: 'fgc_example' },
});
