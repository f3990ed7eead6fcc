import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ProjectRecord, RemovalSummary } from '../records.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a project with its environments and services',
  input: z.object({ projectId: RequiredId }),
  output: z.object({ project: ProjectRecord, removed: RemovalSummary }),
  access: { grant: 'canDeleteProjects' },
  example: { projectId: 'prj_example' },
});
