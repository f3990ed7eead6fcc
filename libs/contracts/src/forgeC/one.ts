import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ForgeCRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeC (Bitbucket) connection, without its secrets',
  description: 'Members need the connection\'s `gitProviderId` in `accessedGitProviders`.',
  input: z.object({ forgeCId: RequiredId }),
  output: ForgeCRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeCId: 'fgc_example' },
});
