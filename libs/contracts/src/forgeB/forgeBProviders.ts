import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ForgeBRecord } from './record.js';

export const forgeBProviders = defineContract({
  method: 'GET',
  summary: 'The forgeB (GitLab) connections the caller may use',
  description:
    'Oldest first: every one of the organization for owners and admins; for members, those ' +
    'whose `gitProviderId` is in their `accessedGitProviders`.',
  input: z.object({}),
  output: z.array(ForgeBRecord),
  access: { grant: 'canAccessToGitProviders' },
  example: {},
});
