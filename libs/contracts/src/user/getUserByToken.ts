import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';

export const getUserByToken = defineContract({
  method: 'GET',
  summary: 'What an invitation token is for: organization, email, whether it is still valid',
  input: z.object({ token: NonEmpty }),
  output: z.object({
    invitationId: z.string(),
    organizationId: z.string(),
    organizationName: z.string(),
    email: z.string(),
    role: z.string(),
    status: z.string(),
    expired: z.boolean(),
    userExists: z.boolean().describe('whether the invitation was made for an existing account, to be accepted with that account\'s own API key'),
  }),
  example: { token: 'sit_token_example' },
});
