import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ForgeDRecord } from './record.js';

export const forgeDProviders = defineContract({
  method: 'GET',
  summary: 'The forgeD (Gitea or Forgejo) connections the caller may use',
  description:
    'Oldest first: every one of the organization for owners and admins; for members, those ' +
    'whose `gitProviderId` is in their `accessedGitProviders`.',
  input: z.object({}),
  output: z.array(ForgeDRecord),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: {},
});
