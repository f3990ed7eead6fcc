import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { NewApiKey } from '../records.js';
export const acceptInvitation = defineContract({
  method: 'POST',
  summary: 'Accept an invitation with its token and receive an API key for that organization',
  input: z.object({
    token: NonEmpty,
    name: NonEmpty.optional(),
  }),
  output: z.object({ userId: z.string(), organizationId: z.string(), apiKey: NewApiKey }),
  access: { auth: 'bodyToken' },
  extension: true,
  description:
    'Beyond the spec. Authenticated by the invitation token in the body, not by an API key. ' +
    'Creates the user when the invited email has no account yet (`name` defaults to the ' +
    'part of the email before @), adds the membership and returns a new API key bound to ' +
    'the organization, shown only in this response.',
  example: { token: 'inv_token_example', name: 'Dana' },
});
