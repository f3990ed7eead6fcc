import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeploymentRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The deployments of an application, newest first',
  description:
    'The deploy history of an application, without logs (see ' +
    '`deployment.readLogs`). Access follows access to the application.',
  input: z.object({ applicationId: RequiredId }),
  output: z.array(DeploymentRecord),
  example: { applicationId: 'app_example' },
  extension: true,
});
