import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, NonEmpty } from '../primitives.js';
import { ForgeCRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Connect a forgeC (Bitbucket) workspace',
  description:
    'Authenticates with `forgeCUsername` and an `appPassword`, or with an `apiToken` ' +
    '(with `forgeCEmail`). `forgeCWorkspaceName` limits repositories to that workspace. ' +
    '`authId` is the user the connection is created for (a member of the organization). ' +
    '`appPassword` and `apiToken` are stored encrypted and never returned (`hasAppPassword`, ' +
    '`hasApiToken`). `apiUrl` (optional) is the REST API base, for a self-hosted or ' +
    'proxied API: an http(s) URL, link-local and cloud-metadata addresses refused; default ' +
    'https://api.bitbucket.org/2.0. The ids (`forgeCId`, `gitProviderId`) are generated; ' +
    'values given here are ignored. A member who creates a connection is granted it.',
  input: z.object({
    forgeCId: z.string().optional(),
    forgeCUsername: z.string().optional(),
    forgeCEmail: Email.optional(),
    appPassword: z.string().optional(),
    apiToken: z.string().optional(),
    forgeCWorkspaceName: z.string().optional(),
    gitProviderId: z.string().optional(),
    apiUrl: z.string().optional(),
    authId: NonEmpty,
    name: NonEmpty,
  }),
  output: ForgeCRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    forgeCUsername: 'jdoe',
    appPassword: 'app-password-example',
    forgeCWorkspaceName: 'acme',
    authId: 'usr_example',
    name: 'Bitbucket acme',
  },
});
