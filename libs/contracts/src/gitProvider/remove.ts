import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { GitProviderSummary } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a git forge connection of any kind',
  description:
    'Refused (BAD_REQUEST naming `gitProviderId`) while an application or compose stack ' +
    'uses the connection as its source: point them elsewhere (or `disconnectGitProvider`) ' +
    "first. Members need the connection's `gitProviderId` in `accessedGitProviders`. " +
    'Answers the removed connection.',
  input: z.object({ gitProviderId: RequiredId }),
  output: GitProviderSummary,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { gitProviderId: 'gp_example' },
});
