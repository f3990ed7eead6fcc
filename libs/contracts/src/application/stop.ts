import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const stop = defineContract({
  method: 'POST',
  summary: 'Stop the application',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
});
