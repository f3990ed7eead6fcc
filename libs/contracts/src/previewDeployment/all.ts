import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The preview deployments (one per open pull request) of an application',
  input: z.object({ applicationId: RequiredId }),
  output: z.array(Unspecified),
  example: { applicationId: 'app_example' },
});
