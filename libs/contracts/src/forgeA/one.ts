import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ForgeARecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A forgeA (GitHub App) connection, without its secrets',
  description: "Members need the connection's `gitProviderId` in `accessedGitProviders`.",
  input: z.object({ forgeAId: RequiredId }),
  output: ForgeARecord,
  access: { grant: 'canAccessToGitProviders' },
  extension: true,
  example: { forgeAId: 'fga_example' },
});
