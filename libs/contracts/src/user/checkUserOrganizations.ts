import { z } from 'zod';
import { defineContract } from '../contract.js';


export const checkUserOrganizations = defineContract({
  method: 'GET',
  summary: 'How many and which organizations a user belongs to (yourself, or a member of yours when admin)',
  input: z.object({ userId: z.string() }),
  output: z.object({ count: z.number(), organizationIds: z.array(z.string()) }),
  example: { userId: 'usr_example' },
});
