import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { NewApiKey } from '../records.js';
export const acceptInvitation = defineContract({
  method: 'POST',
  summary: 'Accept an invitation: a new account with its token alone, an existing account with its own API key',
  input: z.object({
    token: NonEmpty,
    name: NonEmpty.optional(),
  }),
  output: z.object({
    userId: z.string(),
    organizationId: z.string(),
    apiKey: NewApiKey.nullable().describe('the new account\'s first key; null when an existing account accepted'),
  }),
  access: { auth: 'bodyToken' },
  extension: true,
  description:
    'Authenticated by the invitation token in the body; a token never yields ' +
    'a key for an account that already exists. An invitation made for an email that had no ' +
    'account is accepted without an API key: it creates the user (`name` defaults to the part ' +
    'of the email before @), adds the membership and returns the new user\'s key bound to the ' +
    'organization, shown only in this response; once any account has that email, it is ' +
    'refused (UNAUTHORIZED). An invitation made for an existing account is accepted only by ' +
    'that account, calling with one of its own API keys (`x-api-key`): it adds the membership ' +
    'and returns `apiKey: null` (user.createApiKey with `metadata.organizationId` makes a key ' +
    'there); without a key it is refused (UNAUTHORIZED), with another account\'s key FORBIDDEN. ' +
    'The invitation stays bound to the account that had the email when it was made: changing ' +
    'an email to an invited address does not capture the invitation. A membership gained by ' +
    'invitation never carries platform administration.',
  example: { token: 'sit_token_example', name: 'Dana' },
});
