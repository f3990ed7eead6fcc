import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';

export const loadMountsByService = defineContract({
  method: 'GET',
  summary: 'The mounts of one running service of the stack',
  input: z.object({ composeId: RequiredId, serviceName: NonEmpty }),
  output: Unspecified,
  example: { composeId: 'cmp_example', serviceName: 'grafana' },
});
