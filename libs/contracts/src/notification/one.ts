import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A notification with its channel record',
  input: z.object({ notificationId: RequiredId }),
  output: Unspecified,
  example: { notificationId: 'ntf_example' },
});
