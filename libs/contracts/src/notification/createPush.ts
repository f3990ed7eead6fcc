import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';
import { Priority, ServerUrl } from './fields.js';
import { PushNotification } from './record.js';

export const createPush = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends push messages to a Gotify server (push)',
  description: 'A Gotify-style push server. `appToken` is write-only.',
  input: z.object({
    ...Flags.shape,
    serverUrl: ServerUrl,
    appToken: NonEmpty,
    priority: Priority,
    decoration: z.boolean(),
  }),
  output: PushNotification,
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
