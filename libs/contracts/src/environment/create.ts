import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { EnvironmentRecord } from '../records.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create an environment in a project; names are unique within a project',
  input: z.object({
    name: NonEmpty,
    description: z.string().optional(),
    projectId: NonEmpty,
  }),
  output: EnvironmentRecord,
  access: { grant: 'canCreateEnvironments' },
  example: { name: 'staging', description: 'Pre-production', projectId: 'prj_example' },
});
