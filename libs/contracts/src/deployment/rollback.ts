import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeploymentRecord } from './record.js';

export const rollback = defineContract({
  method: 'POST',
  summary: 'Put an earlier done deployment of an application back',
  description:
    'Queues a new deployment (title `Rollback`, its own log) that runs the image the given done ' +
    "deployment ran, with the application's current settings and environment, without " +
    'rebuilding, and answers it (`queued`). Built images are kept on the server for the newest ' +
    '`SKIFF_ROLLBACK_KEEP_IMAGES` (3) done deployments while `rollbackActive` is on (the previous ' +
    'one otherwise): a deployment whose image is gone, that is not done, or of a compose stack is ' +
    'BAD_REQUEST naming `deploymentId`. An image a cleanup removed anyway ends the deployment in ' +
    'error at once, naming the image. Access follows access to its application.',
  input: z.object({ deploymentId: RequiredId }),
  output: DeploymentRecord,
  example: { deploymentId: 'dep_example' },
  extension: true,
});
