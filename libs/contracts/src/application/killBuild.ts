import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, RequiredId } from '../primitives.js';

export const killBuild = defineContract({
  method: 'POST',
  summary: "Kill the application's running build",
  description:
    "Beyond the spec: stops the build process of this application's running deployment; " +
    'the deployment ends in error and the running containers are left as they were.',
  input: z.object({ applicationId: RequiredId }),
  output: Empty,
  example: { applicationId: 'app_example' },
  extension: true,
});
