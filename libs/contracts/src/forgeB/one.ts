import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ForgeBRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeB (GitLab) connection, without its secrets',
  description: 'Members need the connection\'s `gitProviderId` in `accessedGitProviders`.',
  input: z.object({ forgeBId: RequiredId }),
  output: ForgeBRecord,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeBId: 'fgb_example' },
});
