import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const byApplicationId = defineContract({
  method: 'GET',
  summary: 'The domains of an application',
  input: z.object({ applicationId: RequiredId }),
  output: z.array(Unspecified),
  example: { applicationId: 'app_example' },
});
