import { z } from 'zod';
import { Timestamp } from '../primitives.js';

/**
 * An AI configuration as responses show it. The API key is write-only: it is stored
 * encrypted and never returned; `hasApiKey` says whether one is set.
 */
export const AiRecord = z.object({
  aiId: z.string(),
  organizationId: z.string(),
  name: z.string(),
  apiUrl: z.string().describe('base URL of the OpenAI-compatible endpoint (`{apiUrl}/models`, `{apiUrl}/chat/completions`)'),
  model: z.string(),
  isEnabled: z.boolean(),
  hasApiKey: z.boolean().describe('an API key is set (the key itself is never returned)'),
  createdAt: Timestamp,
});
