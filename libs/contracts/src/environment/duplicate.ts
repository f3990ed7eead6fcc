import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { EnvironmentWithServices } from '../records.js';

export const duplicate = defineContract({
  method: 'POST',
  summary: 'Copy an environment, its env text and its services, into the same project',
  input: z.object({
    environmentId: RequiredId,
    name: NonEmpty,
    description: z.string().optional(),
  }),
  output: EnvironmentWithServices,
  access: { grant: 'canCreateEnvironments' },
  example: { environmentId: 'env_example', name: 'staging-copy' },
});
