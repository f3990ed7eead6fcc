import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { EnvironmentWithServices } from '../records.js';

export const one = defineContract({
  method: 'GET',
  summary: 'An environment with the services the caller may see',
  input: z.object({ environmentId: RequiredId }),
  output: EnvironmentWithServices,
  example: { environmentId: 'env_example' },
});
