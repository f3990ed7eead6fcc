import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';
import { FlagsPatch } from './flags.js';

export const updateMessenger = defineContract({
  method: 'POST',
  summary: 'Change a messenger-bot notification channel',
  input: z.object({
    ...FlagsPatch.shape,
    botToken: NonEmpty.optional(),
    chatId: NonEmpty.optional(),
    messageThreadId: z.string().optional(),
    notificationId: RequiredId,
    messengerId: RequiredId,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    messengerId: 'msg_example',
    chatId: '-1009876543210',
    serverThreshold: false,
  },
});
