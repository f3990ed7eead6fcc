import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ForgeARecord } from './record.js';

export const forgeAProviders = defineContract({
  method: 'GET',
  summary: 'The forgeA (GitHub App) connections the caller may use',
  description:
    'Oldest first: every one of the organization for owners and admins; for members, those ' +
    'whose `gitProviderId` is in their `accessedGitProviders`.',
  input: z.object({}),
  output: z.array(ForgeARecord),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: {},
});
