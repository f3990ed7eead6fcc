import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';

export const createCommunity = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that posts to a community-server webhook',
  input: z.object({
    ...Flags.shape,
    webhookUrl: NonEmpty,
    decoration: z.boolean(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-community',
    webhookUrl: 'https://community.example.com/api/webhooks/123/abc',
    decoration: true,
  },
});
