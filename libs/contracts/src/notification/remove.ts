import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId, Unspecified } from '../primitives.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a notification and its channel record',
  input: z.object({ notificationId: RequiredId }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { notificationId: 'ntf_example' },
});
