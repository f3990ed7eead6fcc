import { z } from 'zod';
import { defineContract } from '../contract.js';
import { OrganizationWithRole } from '../records.js';
export const one = defineContract({
  method: 'GET',
  summary: 'One organization the caller belongs to',
  input: z.object({ organizationId: z.string() }),
  output: OrganizationWithRole,
  example: { organizationId: 'org_example' },
});
