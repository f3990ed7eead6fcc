import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { CancelResult } from './cancel-result.js';

export const killBuild = defineContract({
  method: 'POST',
  summary: "Kill the application's running build",
  description:
    "Kills the build (clone, fetch and image build) of this application's running " +
    'deployment, only while it builds: the deployment ends `cancelled` with the reason `the build was ' +
    'killed by the user`, and the running containers are left as they were. A deployment whose rollout ' +
    'has begun is left to finish (BAD_REQUEST; `cancelDeployment` stops it). An agent that does not ' +
    'answer within 5 s is BAD_REQUEST naming the server.',
  input: z.object({ applicationId: RequiredId }),
  output: CancelResult,
  example: { applicationId: 'app_example' },
  extension: true,
});
