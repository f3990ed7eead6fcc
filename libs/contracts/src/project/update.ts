import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { ProjectRecord } from '../records.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change a project',
  description:
    '`createdAt` is read-only and ignored. `organizationId`, when given, must be the ' +
    "project's own organization: moving a project between organizations is refused.",
  input: z.object({
    projectId: RequiredId,
    name: NonEmpty.optional(),
    description: z.string().nullable().optional(),
    createdAt: z.string().optional(),
    organizationId: z.string().optional(),
    env: z.string().optional(),
  }),
  output: ProjectRecord,
  example: { projectId: 'prj_example', name: 'shop-v2', env: 'REGION=us' },
});
