import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getForgeDBranches = defineContract({
  method: 'GET',
  summary: 'The branches of a forgeD (Gitea/Forgejo) repository',
  description: 'Every page, as `{name, commit}`. `owner` is the account or organization, `repo` the repository name; `forgeDId` is required.',
  input: z.object({ owner: z.string(), repo: z.string(), forgeDId: Id.optional() }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { owner: 'acme', repo: 'shop', forgeDId: 'fgd_example' },
});
