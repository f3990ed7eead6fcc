import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getForgeCBranches = defineContract({
  method: 'GET',
  summary: 'The branches of a forgeC (Bitbucket) repository',
  description: '`owner` is the workspace and `repo` the repository slug.',
  input: z.object({ owner: z.string(), repo: z.string(), forgeCId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  example: { owner: 'acme', repo: 'shop', forgeCId: 'fgc_example' },
});
