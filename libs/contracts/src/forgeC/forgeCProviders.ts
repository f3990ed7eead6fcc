import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ForgeCRecord } from './record.js';

export const forgeCProviders = defineContract({
  method: 'GET',
  summary: 'The forgeC (Bitbucket) connections the caller may use',
  description:
    'Oldest first: every one of the organization for owners and admins; for members, those ' +
    'whose `gitProviderId` is in their `accessedGitProviders`.',
  input: z.object({}),
  output: z.array(ForgeCRecord),
  access: { grant: 'canAccessToGitProviders' },
  example: {},
});
