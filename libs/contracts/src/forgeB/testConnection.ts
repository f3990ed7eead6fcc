import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const testConnection = defineContract({
  method: 'POST',
  summary: 'Check that a forgeB (GitLab) connection can list repositories',
  description: '`groupName`, when given, is tried instead of the stored group.',
  input: z.object({ forgeBId: RequiredId, groupName: z.string().optional() }),
  output: Unspecified,
  access: { grant: 'canAccessToGitProviders' },
  example: { forgeBId: 'fgb_example', groupName: 'acme' },
});
