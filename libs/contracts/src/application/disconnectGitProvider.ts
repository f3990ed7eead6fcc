import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { RequiredId } from '../primitives.js';

export const disconnectGitProvider = defineContract({
  method: 'POST',
  summary: 'Detach the application from its git or forge source',
  input: z.object({ applicationId: RequiredId }),
  output: ApplicationRecord,
  example: { applicationId: 'app_example' },
});
