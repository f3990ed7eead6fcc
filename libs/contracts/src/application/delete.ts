import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete an application with its containers, domains and deployments',
  input: z.object({ applicationId: RequiredId }),
  output: Unspecified,
  access: { grant: 'canDeleteServices' },
  example: { applicationId: 'app_example' },
});
