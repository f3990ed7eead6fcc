import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';
import { MessengerNotification } from './record.js';

export const createMessenger = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends messages through a Telegram bot (messenger)',
  description: 'A Telegram-style bot. `botToken` is write-only; `messageThreadId` is the topic inside the chat (empty: none).',
  input: z.object({
    ...Flags.shape,
    botToken: NonEmpty,
    chatId: NonEmpty,
    messageThreadId: z.string(),
  }),
  output: MessengerNotification,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-messenger',
    botToken: '123456789:AAExampleBotToken',
    chatId: '-1001234567890',
    messageThreadId: '',
  },
});
