import { z } from 'zod';
import { defineContract } from '../contract.js';
import { InvitationRecord } from '../records.js';
export const allInvitations = defineContract({
  method: 'GET',
  summary: 'The invitations of the current organization',
  input: z.object({}),
  output: z.array(InvitationRecord),
  access: { role: 'admin' },
  example: {},
});
