import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, Id, NonEmpty, RequiredId } from '../primitives.js';
import { ForgeCRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeC (Bitbucket) connection',
  description:
    '`name` is replaced; other fields left out are kept, and so are secrets (an empty one ' +
    "removes it). `gitProviderId` must be the connection's own; `organizationId`, when " +
    "given, must be the connection's own organization (the caller's). URL rules as in " +
    '`forgeC.create`.',
  input: z.object({
    forgeCId: RequiredId,
    forgeCUsername: z.string().optional(),
    forgeCEmail: Email.optional(),
    appPassword: z.string().optional(),
    apiToken: z.string().optional(),
    forgeCWorkspaceName: z.string().optional(),
    apiUrl: z.string().optional(),
    gitProviderId: Id,
    name: NonEmpty,
    organizationId: z.string().optional(),
  }),
  output: ForgeCRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    forgeCId: 'fgc_example',
    gitProviderId: 'gp_example',
    name: 'Bitbucket acme',
    forgeCWorkspaceName: 'acme-eu',
  },
});
