import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DeploymentRecord } from './record.js';

export const allByCompose = defineContract({
  method: 'GET',
  summary: 'The deployments of a compose stack, newest first',
  description:
    'The deploy history of a compose stack, without logs (see ' +
    '`deployment.readLogs`). Access follows access to the stack.',
  input: z.object({ composeId: RequiredId }),
  output: z.array(DeploymentRecord),
  example: { composeId: 'cmp_example' },
  extension: true,
});
