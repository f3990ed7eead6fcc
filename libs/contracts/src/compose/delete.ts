import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete a compose stack with its services, domains and deployments',
  description: 'Named volumes are kept unless `deleteVolumes` is true.',
  input: z.object({ composeId: RequiredId, deleteVolumes: z.boolean().optional() }),
  output: Unspecified,
  access: { grant: 'canDeleteServices' },
  example: { composeId: 'cmp_example', deleteVolumes: false },
});
