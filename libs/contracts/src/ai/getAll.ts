import { z } from 'zod';
import { defineContract } from '../contract.js';
import { AiRecord } from './record.js';

export const getAll = defineContract({
  method: 'GET',
  summary: 'Every AI configuration of the organization',
  description: 'Oldest first. Members may read them too; API keys are never returned.',
  input: z.object({}),
  output: z.array(AiRecord),
  example: {},
});
