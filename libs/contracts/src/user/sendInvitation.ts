import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const sendInvitation = defineContract({
  method: 'POST',
  summary: 'Send an invitation through an email notification channel',
  input: z.object({ invitationId: NonEmpty, notificationId: NonEmpty }),
  output: Empty,
  access: { role: 'admin' },
  description:
    'Emails the invitation to the invited address only, through the email channel `notificationId` ' +
    'names (its SMTP settings and sender; not its recipients), or through the operator\'s SMTP ' +
    '(`SKIFF_SMTP_URL`) with `notificationId: "platform"`. The email carries a new token: the one ' +
    'organization.inviteMember answered stops working once the email is sent (a failed send changes nothing).',
  example: { invitationId: 'inv_example', notificationId: 'ntf_example' },
});
