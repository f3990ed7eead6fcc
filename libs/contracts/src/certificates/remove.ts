import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a stored certificate and its files from the proxy',
  input: z.object({ certificateId: RequiredId }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { certificateId: 'crt_example' },
});
