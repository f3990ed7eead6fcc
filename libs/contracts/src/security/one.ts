import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A basic-auth entry (its password is never returned)',
  input: z.object({ securityId: RequiredId }),
  output: Unspecified,
  example: { securityId: 'sec_example' },
});
