import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const forgeBProviders = defineContract({
  method: 'GET',
  summary: 'The forgeB (GitLab) connections the caller may use',
  input: z.object({}),
  output: z.array(Unspecified),
  access: { grant: 'canAccessToGitProviders' },
  example: {},
});
