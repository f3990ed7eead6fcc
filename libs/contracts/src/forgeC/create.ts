import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Connect a forgeC (Bitbucket) workspace',
  description:
    'Authenticates with `forgeCUsername` and an `appPassword`, or with an `apiToken` ' +
    '(with `forgeCEmail`). `forgeCWorkspaceName` limits repositories to that workspace. ' +
    '`authId` is the user the connection is created for. Secrets are never returned.',
  input: z.object({
    forgeCId: z.string().optional(),
    forgeCUsername: z.string().optional(),
    forgeCEmail: Email.optional(),
    appPassword: z.string().optional(),
    apiToken: z.string().optional(),
    forgeCWorkspaceName: z.string().optional(),
    gitProviderId: z.string().optional(),
    authId: NonEmpty,
    name: NonEmpty,
  }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: {
    forgeCUsername: 'jdoe',
    appPassword: 'app-password-example',
    forgeCWorkspaceName: 'acme',
    authId: 'usr_example',
    name: 'Bitbucket acme',
  },
});
