import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Flags, flagsExample } from './flags.js';
import { WebhookUrl } from './fields.js';
import { HookNotification } from './record.js';

export const createHook = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that posts to a Slack-style incoming webhook (hook)',
  description: 'A Slack-style incoming webhook. `webhookUrl` is write-only (it carries the secret).',
  input: z.object({
    ...Flags.shape,
    webhookUrl: WebhookUrl,
    channel: z.string(),
  }),
  output: HookNotification,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-hook',
    webhookUrl: 'https://hooks.example.com/services/T000/B000/XXXX',
    channel: '#deployments',
  },
});
