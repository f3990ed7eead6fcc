import { z } from 'zod';
import { defineContract } from '../contract.js';
import { OrganizationRecord } from '../records.js';
export const delete_ = defineContract({
  method: 'POST',
  summary: 'Delete an organization with everything in it (owner only; not your only organization)',
  input: z.object({ organizationId: z.string() }),
  output: OrganizationRecord,
  description:
    'The caller must own that organization. Refused for the only organization the caller ' +
    'belongs to. Everything in it goes: projects, services, members, keys and invitations.',
  example: { organizationId: 'org_example' },
});
