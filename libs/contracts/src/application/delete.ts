import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ApplicationRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete an application with its containers, domains and deployments',
  input: z.object({ applicationId: RequiredId }),
  output: ApplicationRecord,
  access: { grant: 'canDeleteServices' },
  example: { applicationId: 'app_example' },
});
