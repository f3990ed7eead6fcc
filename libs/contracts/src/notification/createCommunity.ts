import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Flags, flagsExample } from './flags.js';
import { WebhookUrl } from './fields.js';
import { CommunityNotification } from './record.js';

export const createCommunity = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that posts to a Discord webhook (community)',
  description: 'A Discord-style webhook. `webhookUrl` is write-only (it carries the secret); `decoration` adds colours and emphasis to messages.',
  input: z.object({
    ...Flags.shape,
    webhookUrl: WebhookUrl,
    decoration: z.boolean(),
  }),
  output: CommunityNotification,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-community',
    webhookUrl: 'https://community.example.com/api/webhooks/123/abc',
    decoration: true,
  },
});
