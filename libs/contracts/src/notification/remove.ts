import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { NotificationRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove a notification and its channel record',
  description: 'Answers the removed notification. An unknown notification is NOT_FOUND.',
  input: z.object({ notificationId: RequiredId }),
  output: NotificationRecord,
  access: { role: 'admin' },
  example: { notificationId: 'ntf_example' },
});
