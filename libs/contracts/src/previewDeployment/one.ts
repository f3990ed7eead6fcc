import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A preview deployment',
  input: z.object({ previewDeploymentId: Id }),
  output: Unspecified,
  example: { previewDeploymentId: 'pvw_example' },
});
