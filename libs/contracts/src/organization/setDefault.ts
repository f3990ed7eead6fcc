import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { OrganizationWithRole } from '../records.js';
export const setDefault = defineContract({
  method: 'POST',
  summary: 'Make an organization the default one of the caller (used for new keys without metadata)',
  input: z.object({ organizationId: NonEmpty }),
  output: OrganizationWithRole,
  example: { organizationId: 'org_example' },
});
