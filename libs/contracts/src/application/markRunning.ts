import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const markRunning = defineContract({
  method: 'POST',
  summary: 'Set the application status to running',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
});
