import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ApplicationRecord } from './record.js';

export const refreshToken = defineContract({
  method: 'POST',
  summary: 'Generate a new webhook token for the application',
  description:
    'The previous deploy-hook address and forge hook secret stop working; the answer is the ' +
    'application with its new `refreshToken` (random, encrypted at rest).',
  input: z.object({ applicationId: RequiredId }),
  output: ApplicationRecord,
  example: { applicationId: 'app_example' },
  extension: true,
});
