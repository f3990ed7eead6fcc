import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';

export const createHook = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that posts to a chat webhook',
  input: z.object({
    ...Flags.shape,
    webhookUrl: NonEmpty,
    channel: z.string(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-hook',
    webhookUrl: 'https://hooks.example.com/services/T000/B000/XXXX',
    channel: '#deployments',
  },
});
