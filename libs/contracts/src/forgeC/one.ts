import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeC (Bitbucket) connection, without its secrets',
  input: z.object({ forgeCId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeCId: 'fgc_example' },
});
