import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApiKeyRecord } from '../records.js';

export const apiKeys = defineContract({
  method: 'GET',
  summary: 'The API keys of the current organization: your own; admins: every member\'s',
  description:
    'Each key with its scope, expiry and last use (at most a minute behind); ' +
    'never the key itself, which exists only in the answer that created it.',
  input: z.object({}),
  output: z.array(ApiKeyRecord),
  example: {},
  extension: true,
});
