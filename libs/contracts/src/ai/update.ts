import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified, Uri } from '../primitives.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change an AI configuration',
  description: '`createdAt` is read-only and ignored.',
  input: z.object({
    aiId: RequiredId,
    name: NonEmpty.optional(),
    apiUrl: Uri.optional(),
    apiKey: z.string().optional(),
    model: NonEmpty.optional(),
    isEnabled: z.boolean().optional(),
    createdAt: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { aiId: 'ai_example', model: 'gpt-4o', isEnabled: false },
});
