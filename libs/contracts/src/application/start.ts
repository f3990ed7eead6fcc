import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const start = defineContract({
  method: 'POST',
  summary: 'Start the stopped application from its last build',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
});
