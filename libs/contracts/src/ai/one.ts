import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'An AI configuration of the organization',
  description: 'The API key is never returned in full.',
  input: z.object({ aiId: Id }),
  output: Unspecified,
  example: { aiId: 'ai_example' },
});
