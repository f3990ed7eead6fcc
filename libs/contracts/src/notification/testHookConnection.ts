import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';
import { WebhookUrl } from './fields.js';

export const testHookConnection = defineContract({
  method: 'POST',
  summary: 'Send a test message to a Slack-style incoming webhook (hook) without storing it',
  input: z.object({
    webhookUrl: WebhookUrl,
    channel: z.string(),
  }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    webhookUrl: 'https://hooks.example.com/services/T000/B000/XXXX',
    channel: '#deployments',
  },
});
