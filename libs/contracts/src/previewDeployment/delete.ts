import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a preview deployment with its containers and domain',
  input: z.object({ previewDeploymentId: Id }),
  output: Unspecified,
  example: { previewDeploymentId: 'pvw_example' },
});
