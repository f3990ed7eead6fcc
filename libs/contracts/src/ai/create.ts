import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Uri } from '../primitives.js';
import { AiRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Store a configuration for an OpenAI-compatible endpoint',
  description:
    '`apiUrl` must be an http(s) URL; link-local (169.254.0.0/16, fe80::/10) and cloud-metadata ' +
    'addresses (such as metadata.google.internal) are refused. `apiKey` is stored encrypted and ' +
    'never returned (`hasApiKey`); an empty key means the endpoint needs none.',
  input: z.object({
    name: NonEmpty,
    apiUrl: Uri,
    apiKey: z.string(),
    model: NonEmpty,
    isEnabled: z.boolean(),
  }),
  output: AiRecord,
  access: { role: 'admin' },
  example: {
    name: 'OpenAI',
    apiUrl: 'https://api.openai.com/v1',
    apiKey: 'sk-example',
    model: 'gpt-4o-mini',
    isEnabled: true,
  },
});
