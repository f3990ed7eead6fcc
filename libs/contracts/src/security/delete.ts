import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { SecurityRecord } from './record.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a basic-auth entry',
  description: 'Answers the removed record.',
  input: z.object({ securityId: RequiredId }),
  output: SecurityRecord,
  example: { securityId: 'sec_example' },
});
