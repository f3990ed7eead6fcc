import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';

export const createMessenger = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends messages through a messenger bot',
  input: z.object({
    ...Flags.shape,
    botToken: NonEmpty,
    chatId: NonEmpty,
    messageThreadId: z.string(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-messenger',
    botToken: '123456789:AAExampleBotToken',
    chatId: '-1001234567890',
    messageThreadId: '',
  },
});
