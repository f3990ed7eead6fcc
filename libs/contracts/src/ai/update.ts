import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Uri } from '../primitives.js';
import { AiRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: 'Change an AI configuration',
  description:
    'Changes the fields given. `createdAt` is read-only and ignored. An `apiKey` left out is ' +
    'kept; an empty one removes it. ' +
    '`apiUrl` must be an http(s) URL; link-local (169.254.0.0/16, fe80::/10) and cloud-metadata ' +
    'addresses (such as metadata.google.internal) are refused.',
  input: z.object({
    aiId: RequiredId,
    name: NonEmpty.optional(),
    apiUrl: Uri.optional(),
    apiKey: z.string().optional(),
    model: NonEmpty.optional(),
    isEnabled: z.boolean().optional(),
    createdAt: z.string().optional(),
  }),
  output: AiRecord,
  access: { role: 'admin' },
  example: { aiId: 'ai_example', model: 'gpt-4o', isEnabled: false },
});
