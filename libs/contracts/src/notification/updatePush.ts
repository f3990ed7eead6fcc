import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { FlagsPatch } from './flags.js';
import { OrganizationOfCaller, Priority, ServerUrl, UPDATE_NOTE } from './fields.js';
import { PushNotification } from './record.js';

export const updatePush = defineContract({
  method: 'POST',
  summary: 'Change a Gotify (push) notification channel',
  description: UPDATE_NOTE,
  input: z.object({
    ...FlagsPatch.shape,
    serverUrl: ServerUrl.optional(),
    appToken: NonEmpty.optional(),
    priority: Priority.optional(),
    decoration: z.boolean().optional(),
    notificationId: RequiredId,
    pushId: RequiredId,
    organizationId: OrganizationOfCaller,
  }),
  output: PushNotification,
  access: { role: 'admin' },
  example: { notificationId: 'ntf_example', pushId: 'psh_example', priority: 8 },
});
