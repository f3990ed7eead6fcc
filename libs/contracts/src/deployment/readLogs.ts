import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeploymentLog } from './record.js';

export const readLogs = defineContract({
  method: 'GET',
  summary: 'The log and status of a deployment',
  description:
    'The lines the agent reported for this deployment so far (the newest ' +
    '256 KiB), with its status. Access follows access to its application or compose stack.',
  input: z.object({ deploymentId: RequiredId }),
  output: DeploymentLog,
  example: { deploymentId: 'dep_example' },
  extension: true,
});
