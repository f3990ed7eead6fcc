import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NewApiKey } from '../records.js';

export const generateToken = defineContract({
  method: 'POST',
  summary: 'Create a new API key for the caller in the current organization',
  input: z.object({}),
  output: NewApiKey,
  description: 'Same as user.createApiKey with a generated name; the key is shown only in this answer.',
  example: {},
});
