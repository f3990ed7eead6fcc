import { z } from 'zod';
import { defineContract } from '../contract.js';

export const getMetricsToken = defineContract({
  method: 'GET',
  summary: 'The token that metrics senders present to notification.receiveNotification',
  input: z.object({}),
  output: z.object({ token: z.string() }),
  access: { role: 'admin' },
  example: {},
});
