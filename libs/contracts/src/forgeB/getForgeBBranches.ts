import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const getForgeBBranches = defineContract({
  method: 'GET',
  summary: 'The branches of a forgeB (GitLab) repository',
  description:
    '`owner` is the namespace and `repo` the project path; `id`, the numeric project id, ' +
    'is used instead when given.',
  input: z.object({
    id: z.number().optional(),
    owner: z.string(),
    repo: z.string(),
    forgeBId: Id.optional(),
  }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  example: { id: 42, owner: 'acme', repo: 'shop', forgeBId: 'fgb_example' },
});
