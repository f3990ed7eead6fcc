import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const disconnectGitProvider = defineContract({
  method: 'POST',
  summary: 'Detach the application from its git or forge source',
  input: z.object({ applicationId: RequiredId }),
  output: Unspecified,
  example: { applicationId: 'app_example' },
});
