import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ForgeDRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeD (Gitea or Forgejo) connection, without its secrets',
  description: "Members need the connection's `gitProviderId` in `accessedGitProviders`.",
  input: z.object({ forgeDId: RequiredId }),
  output: ForgeDRecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeDId: 'fgd_example' },
});
