import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const redeploy = defineContract({
  method: 'POST',
  summary: 'Queue a rebuild and redeploy of the application',
  input: z.object({
    applicationId: RequiredId,
    title: z.string().optional(),
    description: z.string().optional(),
  }),
  output: Empty,
  example: { applicationId: 'app_example', title: 'Rebuild after base image update' },
});
