import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { OrganizationRecord } from '../records.js';
export const update = defineContract({
  method: 'POST',
  summary: 'Rename an organization, change its logo or the role given to new invitees',
  input: z.object({
    organizationId: z.string(),
    name: NonEmpty,
    logo: z.string().optional(),
    defaultRole: z.string().nullable().optional(),
  }),
  output: OrganizationRecord,
  description: 'The caller must be an owner or admin of that organization.',
  example: { organizationId: 'org_example', name: 'Acme Inc', defaultRole: 'member' },
});
