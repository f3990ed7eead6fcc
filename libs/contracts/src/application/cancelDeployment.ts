import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const cancelDeployment = defineContract({
  method: 'POST',
  summary: "Cancel the application's running deployment",
  description:
    "Beyond the spec: stops only this application's running build or deploy job and marks " +
    'the deployment cancelled; queued jobs stay queued.',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
  extension: true,
});
