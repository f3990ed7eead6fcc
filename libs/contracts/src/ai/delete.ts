import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id } from '../primitives.js';
import { AiRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove an AI configuration',
  description: 'Answers the removed record.',
  input: z.object({ aiId: Id }),
  output: AiRecord,
  access: { role: 'admin' },
  example: { aiId: 'ai_example' },
});
