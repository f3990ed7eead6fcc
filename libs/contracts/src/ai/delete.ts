import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove an AI configuration',
  input: z.object({ aiId: Id }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { aiId: 'ai_example' },
});
