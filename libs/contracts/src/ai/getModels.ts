import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';

export const getModels = defineContract({
  method: 'GET',
  summary: 'The models offered by an OpenAI-compatible endpoint',
  description:
    'Lists `{apiUrl}/models` with `apiKey` as bearer token. Link-local and cloud-metadata ' +
    'addresses are refused; loopback and private ranges only where the operator allows them.',
  input: z.object({ apiUrl: NonEmpty, apiKey: z.string() }),
  output: z.array(Unspecified),
  example: { apiUrl: 'https://api.openai.com/v1', apiKey: 'sk-example' },
});
