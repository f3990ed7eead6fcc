import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified, Uri } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Store a configuration for an OpenAI-compatible endpoint',
  input: z.object({
    name: NonEmpty,
    apiUrl: Uri,
    apiKey: z.string(),
    model: NonEmpty,
    isEnabled: z.boolean(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    name: 'OpenAI',
    apiUrl: 'https://api.openai.com/v1',
    apiKey: 'sk-example',
    model: 'gpt-4o-mini',
    isEnabled: true,
  },
});
