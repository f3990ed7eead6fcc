import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { AiRecord } from './record.js';

export const get = defineContract({
  method: 'GET',
  summary: 'An AI configuration of the organization (same as ai.one)',
  description: 'Members may read it too. The API key is never returned (`hasApiKey` says whether one is set).',
  input: z.object({ aiId: Id }),
  output: AiRecord,
  example: { aiId: 'ai_example' },
});
