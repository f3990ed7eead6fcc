import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Unspecified } from '../primitives.js';

export const getMetricsToken = defineContract({
  method: 'GET',
  summary: 'The token that metrics senders present to notification.receiveNotification',
  input: z.object({}),
  output: Unspecified,
  access: { role: 'admin' },
  example: {},
});
