import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ForgeBRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Connect a forgeB (GitLab) instance through an OAuth application',
  description:
    '`forgeBUrl` is the instance address (gitlab.com or self-hosted), `forgeBInternalUrl` ' +
    'the address the platform uses to reach it when different. `applicationId` and `secret` ' +
    'are the OAuth application credentials, `redirectUri` its callback; `groupName` limits ' +
    'repositories to that group. `authId` is the user the connection is created for (a member ' +
    'of the organization). `forgeBUrl` and `forgeBInternalUrl` must be http(s) URLs; ' +
    'link-local and cloud-metadata addresses are refused. `secret` is stored encrypted and ' +
    'never returned (`hasSecret`). The ids (`forgeBId`, `gitProviderId`) are generated; a ' +
    '`gitProviderId` given here is ignored. A member who creates a connection is granted it. ' +
    '`accessToken` is the token the API and clones use: an OAuth access token (with its ' +
    '`refreshToken`: renewed through `{forgeBUrl}/oauth/token` with `applicationId` and `secret` ' +
    'when expired or refused, the new tokens stored encrypted) or a personal/group access ' +
    'token. Both write-only (`hasAccessToken`, `hasRefreshToken`).',
  input: z.object({
    applicationId: z.string().optional(),
    secret: z.string().optional(),
    accessToken: z.string().optional(),
    refreshToken: z.string().optional(),
    groupName: z.string().optional(),
    gitProviderId: z.string().optional(),
    redirectUri: z.string().optional(),
    authId: NonEmpty,
    name: NonEmpty,
    forgeBUrl: NonEmpty,
    forgeBInternalUrl: z.string().nullable().optional(),
  }),
  output: ForgeBRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    applicationId: 'oauth-app-example',
    secret: 'oauth-secret-example',
    redirectUri: 'https://skiff.example.com/api/providers/forgeB/callback',
    authId: 'usr_example',
    name: 'GitLab',
    forgeBUrl: 'https://gitlab.com',
  },
});
