import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Email } from '../primitives.js';
import { InvitationRecord } from '../records.js';
export const inviteMember = defineContract({
  method: 'POST',
  summary: 'Invite someone by email into the current organization',
  input: z.object({
    email: Email,
    role: z.enum(['admin', 'member']).optional(),
  }),
  output: InvitationRecord.extend({ token: z.string().describe("one-time token for organization.acceptInvitation; shown only here") }),
  access: { role: 'admin' },
  extension: true,
  description:
    'The role defaults to the organization\'s `defaultRole`, else member. ' +
    'The answer carries the one-time invitation token, valid seven days; hand it to the ' +
    'invitee, or have user.sendInvitation email the invitee a new one (which replaces it).',
  example: { email: 'dev@example.com', role: 'member' },
});
