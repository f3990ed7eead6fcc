import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { DomainRecord } from './record.js';

export const byApplicationId = defineContract({
  method: 'GET',
  summary: 'The domains of an application',
  description: "Oldest first; the domains of the application's previews are not included.",
  input: z.object({ applicationId: RequiredId }),
  output: z.array(DomainRecord),
  example: { applicationId: 'app_example' },
});
