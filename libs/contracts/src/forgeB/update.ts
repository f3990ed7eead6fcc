import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeB (GitLab) connection',
  description: 'Secrets left out are kept.',
  input: z.object({
    applicationId: z.string().optional(),
    secret: z.string().optional(),
    groupName: z.string().optional(),
    redirectUri: z.string().optional(),
    name: NonEmpty,
    forgeBId: RequiredId,
    forgeBUrl: NonEmpty,
    gitProviderId: RequiredId,
    forgeBInternalUrl: z.string().nullable().optional(),
  }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    name: 'GitLab self-hosted',
    forgeBId: 'fgb_example',
    forgeBUrl: 'https://gitlab.example.com',
    gitProviderId: 'gp_example',
    forgeBInternalUrl: 'http://gitlab.internal:8080',
  },
});
