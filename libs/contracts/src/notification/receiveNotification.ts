import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const receiveNotification = defineContract({
  method: 'POST',
  summary: 'Accept a server resource-threshold alert from a monitoring sender',
  description:
    'Called by remote monitoring senders that hold no API key: the body `Token` authenticates ' +
    'the call. The alert is forwarded to the channels subscribed to `serverThreshold`.',
  input: z.object({
    ServerType: z.enum(['Platform', 'Remote']).default('Platform'),
    Type: z.enum(['Memory', 'CPU']),
    Value: z.number(),
    Threshold: z.number(),
    Message: z.string(),
    Timestamp: z.string(),
    Token: z.string(),
  }),
  output: Empty,
  access: { auth: 'bodyToken' },
  example: {
    ServerType: 'Remote',
    Type: 'CPU',
    Value: 93.5,
    Threshold: 85,
    Message: 'CPU usage 93.5% is above the 85% threshold',
    Timestamp: '2024-05-01T12:00:00.000Z',
    Token: 'mon_token_example',
  },
});
