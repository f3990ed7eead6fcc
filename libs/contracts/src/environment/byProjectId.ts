import { z } from 'zod';
import { defineContract } from '../contract.js';
import { EnvironmentWithServices } from '../records.js';

export const byProjectId = defineContract({
  method: 'GET',
  summary: 'The environments of a project that the caller may see',
  input: z.object({ projectId: z.string() }),
  output: z.array(EnvironmentWithServices),
  example: { projectId: 'prj_example' },
});
