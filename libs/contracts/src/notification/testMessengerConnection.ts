import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';

export const testMessengerConnection = defineContract({
  method: 'POST',
  summary: 'Send a test message through a Telegram bot (messenger) without storing it',
  input: z.object({
    botToken: NonEmpty,
    chatId: NonEmpty,
    messageThreadId: z.string(),
  }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    botToken: '123456789:AAExampleBotToken',
    chatId: '-1001234567890',
    messageThreadId: '42',
  },
});
