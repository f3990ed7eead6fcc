import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { ProjectWithEnvironments } from '../records.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Create a project, with a first environment named "production"',
  input: z.object({
    name: NonEmpty,
    description: z.string().nullable().optional(),
    env: z.string().optional(),
  }),
  output: ProjectWithEnvironments,
  access: { grant: 'canCreateProjects' },
  example: { name: 'shop', description: 'The web shop', env: 'REGION=eu' },
});
