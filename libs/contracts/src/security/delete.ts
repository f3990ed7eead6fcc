import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const delete_ = defineContract({
  method: 'POST',
  summary: 'Remove a basic-auth entry',
  input: z.object({ securityId: RequiredId }),
  output: Unspecified,
  example: { securityId: 'sec_example' },
});
