import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Timestamp } from '../primitives.js';

const Delivery = z.object({
  deliveryId: z.string().describe('also the idempotency key sent with every attempt'),
  notificationId: z.string(),
  eventId: z.string(),
  eventKind: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  nextAttemptAt: Timestamp.nullable().describe('null once delivered or failed'),
  lastError: z.string().nullable().describe('why the last attempt failed; never a secret'),
  createdAt: Timestamp,
  deliveredAt: Timestamp.nullable(),
});

export const deliveries = defineContract({
  method: 'GET',
  summary: "Recent deliveries of the organization's events to its channels, newest first",
  description:
    'One row per event and subscribed channel: pending (waiting for its next attempt), ' +
    'delivered, or failed (refused for good, or still failing a day after the event). ' +
    'A channel that keeps failing shows here with its last error.',
  input: z.object({
    notificationId: z.string().min(1).optional(),
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    limit: z.number().int().min(1).max(200).optional().describe('default 50'),
  }),
  output: z.object({ items: z.array(Delivery) }),
  access: { role: 'admin' },
  example: { limit: 20 },
  extension: true,
});
