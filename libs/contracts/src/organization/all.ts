import { z } from 'zod';
import { defineContract } from '../contract.js';
import { OrganizationWithRole } from '../records.js';
export const all = defineContract({
  method: 'GET',
  summary: 'The organizations the caller belongs to',
  input: z.object({}),
  output: z.array(OrganizationWithRole),
  example: {},
});
