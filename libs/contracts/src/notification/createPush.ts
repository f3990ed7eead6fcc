import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';

export const createPush = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends push messages to a push server',
  input: z.object({
    ...Flags.shape,
    serverUrl: NonEmpty,
    appToken: NonEmpty,
    priority: z.number().min(1),
    decoration: z.boolean(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-push',
    serverUrl: 'https://push.example.com',
    appToken: 'AbCdEf123456',
    priority: 5,
    decoration: true,
  },
});
