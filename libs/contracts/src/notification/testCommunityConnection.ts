import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';
import { WebhookUrl } from './fields.js';

export const testCommunityConnection = defineContract({
  method: 'POST',
  summary: 'Send a test message to a Discord webhook (community) without storing it',
  input: z.object({
    webhookUrl: WebhookUrl,
    decoration: z.boolean().optional(),
  }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    webhookUrl: 'https://community.example.com/api/webhooks/123/abc',
    decoration: true,
  },
});
