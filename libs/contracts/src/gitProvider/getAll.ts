import { z } from 'zod';
import { defineContract } from '../contract.js';
import { GitProviderSummary } from './record.js';

export const getAll = defineContract({
  method: 'GET',
  summary: 'Every git forge connection the caller may use, of every kind',
  description:
    'Oldest first: every one of the organization for owners and admins; for members, those ' +
    'whose `gitProviderId` is in their `accessedGitProviders`. Read one with ' +
    '`<kind>.one` and its `forgeId`.',
  input: z.object({}),
  output: z.array(GitProviderSummary),
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: {},
});
