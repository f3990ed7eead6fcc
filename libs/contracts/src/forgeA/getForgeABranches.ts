import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getForgeABranches = defineContract({
  method: 'GET',
  summary: 'The branches of a forgeA (GitHub App) repository',
  description: 'Every page, as `{name, commit}`. `owner` is the account or organization, `repo` the repository name; `forgeAId` is required.',
  input: z.object({ owner: z.string(), repo: z.string(), forgeAId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { owner: 'acme', repo: 'shop', forgeAId: 'fga_example' },
});
