import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const getForgeARepositories = defineContract({
  method: 'GET',
  summary: 'The repositories reachable through a forgeA (GitHub App) connection',
  description:
    'Every page the forge has, as `{id, name, fullName, owner, defaultBranch, private, cloneUrl}`. ' +
    'A forge that refuses the credentials or cannot be reached is BAD_REQUEST naming `forgeAId`, with its reason.',
  input: z.object({ forgeAId: RequiredId }),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeAId: 'fga_example' },
});
