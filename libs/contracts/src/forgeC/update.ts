import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, Id, NonEmpty, RequiredId, Unspecified } from '../primitives.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeC (Bitbucket) connection',
  description:
    "Secrets left out are kept. `organizationId`, when given, must be the connection's own " +
    'organization.',
  input: z.object({
    forgeCId: RequiredId,
    forgeCUsername: z.string().optional(),
    forgeCEmail: Email.optional(),
    appPassword: z.string().optional(),
    apiToken: z.string().optional(),
    forgeCWorkspaceName: z.string().optional(),
    gitProviderId: Id,
    name: NonEmpty,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    forgeCId: 'fgc_example',
    gitProviderId: 'gp_example',
    name: 'Bitbucket acme',
    forgeCWorkspaceName: 'acme-eu',
  },
});
