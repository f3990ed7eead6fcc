import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { ProjectWithEnvironments } from '../records.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A project with the environments and services the caller may see',
  input: z.object({ projectId: RequiredId }),
  output: ProjectWithEnvironments,
  example: { projectId: 'prj_example' },
});
