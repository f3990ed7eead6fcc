import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { PreviewDeploymentRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'The preview deployments (one per open pull request) of an application',
  description: 'Newest first, each with its domains. Access follows access to the application.',
  input: z.object({ applicationId: RequiredId }),
  output: z.array(PreviewDeploymentRecord),
  example: { applicationId: 'app_example' },
});
