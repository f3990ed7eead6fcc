import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { PreviewDeploymentRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a preview deployment with its containers and domain',
  description:
    'Removes the record with its domains and answers it as it was. Its containers are ' +
    'removed by the agent once workloads run.',
  input: z.object({ previewDeploymentId: Id }),
  output: PreviewDeploymentRecord,
  example: { previewDeploymentId: 'pvw_example' },
});
