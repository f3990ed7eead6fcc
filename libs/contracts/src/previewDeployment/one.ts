import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { PreviewDeploymentRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A preview deployment',
  description: 'With its domains. Access follows access to its application.',
  input: z.object({ previewDeploymentId: Id }),
  output: PreviewDeploymentRecord,
  example: { previewDeploymentId: 'pvw_example' },
});
