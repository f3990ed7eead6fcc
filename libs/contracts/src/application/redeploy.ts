import { z } from 'zod';
import { defineContract } from '../contract.js';
import { DeploymentRecord } from '../deployment/record.js';
import { RequiredId } from '../primitives.js';

export const redeploy = defineContract({
  method: 'POST',
  summary: 'Queue a rebuild and redeploy of the application',
  description:
    'Queues a deployment like `application.deploy` and answers it (`queued`). The environment ' +
    'and settings are read again, so changes since the last deploy take effect.',
  input: z.object({
    applicationId: RequiredId,
    title: z.string().optional(),
    description: z.string().optional(),
  }),
  output: DeploymentRecord,
  example: { applicationId: 'app_example', title: 'Rebuild after base image update' },
});
