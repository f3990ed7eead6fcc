import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A stored certificate (without its private key)',
  input: z.object({ certificateId: RequiredId }),
  output: Unspecified,
  example: { certificateId: 'crt_example' },
});
