import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { SecurityRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A basic-auth entry (its password is never returned)',
  input: z.object({ securityId: RequiredId }),
  output: SecurityRecord,
  example: { securityId: 'sec_example' },
});
