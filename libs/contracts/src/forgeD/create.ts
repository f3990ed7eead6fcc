import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ForgeDRecord, ForgeDSettings } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Connect a forgeD (Gitea or Forgejo) instance',
  description:
    '`forgeDUrl` is the instance address, `forgeDInternalUrl` the address the platform uses ' +
    'to reach it when different; both http(s) URLs, link-local and cloud-metadata addresses ' +
    'refused. Authenticates through an OAuth application (`clientId`, `clientSecret`, its ' +
    'callback `redirectUri`) or with a personal `accessToken`. `organizationName` limits ' +
    'repositories to that organization. `authId` is the user the connection is created for ' +
    '(a member of the organization). `clientSecret` and `accessToken` are stored encrypted ' +
    'and never returned (`hasClientSecret`, `hasAccessToken`). The ids (`forgeDId`, ' +
    '`gitProviderId`) are generated; a `gitProviderId` given here is ignored. A member who ' +
    'creates a connection is granted it.',
  input: z.object({
    ...ForgeDSettings,
    gitProviderId: z.string().optional(),
    authId: NonEmpty,
    name: NonEmpty,
  }),
  output: ForgeDRecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: {
    forgeDUrl: 'https://git.example.com',
    accessToken: 'token-example',
    organizationName: 'acme',
    authId: 'usr_example',
    name: 'Forgejo acme',
  },
});
