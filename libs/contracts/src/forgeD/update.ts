import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ForgeDRecord, ForgeDSettings } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a forgeD (Gitea or Forgejo) connection',
  description:
    '`name` and `forgeDUrl` are replaced; other fields left out are kept, and so are secrets ' +
    '(an empty one removes it; `forgeDInternalUrl: null` clears that address). ' +
    "`gitProviderId` must be the connection's own; `organizationId`, when given, must be " +
    "the connection's own organization (the caller's). URL rules as in `forgeD.create`.",
  input: z.object({
    forgeDId: RequiredId,
    ...ForgeDSettings,
    gitProviderId: RequiredId,
    name: NonEmpty,
    organizationId: z.string().optional(),
  }),
  output: ForgeDRecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeDId: 'fgd_example', forgeDUrl: 'https://git.example.com', gitProviderId: 'gp_example', name: 'Forgejo acme' },
});
