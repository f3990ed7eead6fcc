import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { NotificationRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'A notification with its channel record',
  input: z.object({ notificationId: RequiredId }),
  output: NotificationRecord,
  example: { notificationId: 'ntf_example' },
});
