import { z } from 'zod';
import { defineContract } from '../contract.js';
import { InvitationRecord } from '../records.js';

export const getInvitations = defineContract({
  method: 'GET',
  summary: "The pending invitations addressed to the caller's email, in any organization",
  input: z.object({}),
  output: z.array(InvitationRecord.extend({ organizationName: z.string() })),
  example: {},
});
