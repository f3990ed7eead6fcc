import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const sendInvitation = defineContract({
  method: 'POST',
  summary: 'Send an invitation through an email notification channel',
  input: z.object({ invitationId: NonEmpty, notificationId: NonEmpty }),
  output: Empty,
  access: { role: 'admin' },
  example: { invitationId: 'inv_example', notificationId: 'ntf_example' },
});
