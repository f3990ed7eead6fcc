import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ForgeBRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeB (GitLab) connection',
  description:
    '`name` and `forgeBUrl` are replaced; other fields left out are kept, and so is the ' +
    '`secret` (an empty one removes it; `forgeBInternalUrl: null` clears that address). ' +
    '`gitProviderId` must be the connection\'s own. URL rules as in `forgeB.create`.',
  input: z.object({
    applicationId: z.string().optional(),
    secret: z.string().optional(),
    accessToken: z.string().optional(),
    refreshToken: z.string().optional(),
    groupName: z.string().optional(),
    redirectUri: z.string().optional(),
    name: NonEmpty,
    forgeBId: RequiredId,
    forgeBUrl: NonEmpty,
    gitProviderId: RequiredId,
    forgeBInternalUrl: z.string().nullable().optional(),
  }),
  output: ForgeBRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    name: 'GitLab self-hosted',
    forgeBId: 'fgb_example',
    forgeBUrl: 'https://gitlab.example.com',
    gitProviderId: 'gp_example',
    forgeBInternalUrl: 'http://gitlab.internal:8080',
  },
});
