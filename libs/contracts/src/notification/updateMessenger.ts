import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { FlagsPatch } from './flags.js';
import { OrganizationOfCaller, UPDATE_NOTE } from './fields.js';
import { MessengerNotification } from './record.js';

export const updateMessenger = defineContract({
  method: 'POST',
  summary: 'Change a Telegram bot (messenger) notification channel',
  description: UPDATE_NOTE,
  input: z.object({
    ...FlagsPatch.shape,
    botToken: NonEmpty.optional(),
    chatId: NonEmpty.optional(),
    messageThreadId: z.string().optional(),
    notificationId: RequiredId,
    messengerId: RequiredId,
    organizationId: OrganizationOfCaller,
  }),
  output: MessengerNotification,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    messengerId: 'msg_example',
    chatId: '-1009876543210',
    serverThreshold: false,
  },
});
