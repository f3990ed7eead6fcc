import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const deploy = defineContract({
  method: 'POST',
  summary: 'Queue a build and deployment of the application',
  description:
    'Beyond the spec: the first deployment of an application (redeploy repeats one). The job ' +
    "joins the application's FIFO queue; `title` and `description` label the deployment record.",
  input: z.object({
    applicationId: RequiredId,
    title: z.string().optional(),
    description: z.string().optional(),
  }),
  output: Empty,
  example: { applicationId: 'app_example', title: 'First deployment' },
  extension: true,
});
