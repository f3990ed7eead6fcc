import { z } from 'zod';
import { defineContract } from '../contract.js';
import { ApiKeyRecord } from '../records.js';

export const deleteApiKey = defineContract({
  method: 'POST',
  summary: 'Delete an API key (your own; admins: any key of the organization)',
  input: z.object({ apiKeyId: z.string() }),
  output: ApiKeyRecord,
  example: { apiKeyId: 'key_example' },
});
