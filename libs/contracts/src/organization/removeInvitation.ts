import { z } from 'zod';
import { defineContract } from '../contract.js';
import { InvitationRecord } from '../records.js';
export const removeInvitation = defineContract({
  method: 'POST',
  summary: 'Cancel an invitation of the current organization',
  input: z.object({ invitationId: z.string() }),
  output: InvitationRecord,
  access: { role: 'admin' },
  example: { invitationId: 'inv_example' },
});
