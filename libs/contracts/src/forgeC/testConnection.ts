import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email, RequiredId, Unspecified } from '../primitives.js';

export const testConnection = defineContract({
  method: 'POST',
  summary: 'Check that a forgeC (Bitbucket) connection can list repositories',
  description: 'Credentials given in the body are tried instead of the stored ones.',
  input: z.object({
    forgeCId: RequiredId,
    forgeCUsername: z.string().optional(),
    forgeCEmail: Email.optional(),
    workspaceName: z.string().optional(),
    apiToken: z.string().optional(),
    appPassword: z.string().optional(),
  }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeCId: 'fgc_example', workspaceName: 'acme' },
});
