import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ProjectWithEnvironments } from '../records.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every project of the organization the caller may see',
  input: z.object({}),
  output: z.array(ProjectWithEnvironments),
  example: {},
});
