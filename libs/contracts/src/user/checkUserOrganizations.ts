import { z } from 'zod';
import { defineContract } from '../contract.js';


export const checkUserOrganizations = defineContract({
  method: 'GET',
  summary: 'How many and which organizations a user belongs to (yourself, or a member of yours when admin)',
  description:
    '`count` is the number of organizations the user belongs to; `organizationIds` lists only ' +
    'those the caller belongs to as well (all of them when asking about oneself), so another ' +
    "organization's id is never revealed. Another user must be a member of the caller's " +
    'organization (NOT_FOUND otherwise) and needs an admin (FORBIDDEN for members).',
  input: z.object({ userId: z.string() }),
  output: z.object({ count: z.number(), organizationIds: z.array(z.string()) }),
  example: { userId: 'usr_example' },
});
