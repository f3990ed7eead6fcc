import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApplicationRecord } from './record.js';
import { RequiredId } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'An application with its settings',
  input: z.object({ applicationId: RequiredId }),
  output: ApplicationRecord,
  example: { applicationId: 'app_example' },
});
