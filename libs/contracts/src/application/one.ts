import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'An application with its settings',
  input: z.object({ applicationId: RequiredId }),
  output: Unspecified,
  example: { applicationId: 'app_example' },
});
