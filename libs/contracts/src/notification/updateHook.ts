import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, RequiredId } from '../primitives.js';
import { FlagsPatch } from './flags.js';
import { OrganizationOfCaller, UPDATE_NOTE, WebhookUrl } from './fields.js';
import { HookNotification } from './record.js';

export const updateHook = defineContract({
  method: 'POST',
  summary: 'Change a Slack-style webhook (hook) notification channel',
  description: UPDATE_NOTE,
  input: z.object({
    ...FlagsPatch.shape,
    webhookUrl: WebhookUrl.optional(),
    channel: z.string().optional(),
    notificationId: RequiredId,
    hookId: Id,
    organizationId: OrganizationOfCaller,
  }),
  output: HookNotification,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    hookId: 'hok_example',
    channel: '#alerts',
    appDeploy: false,
  },
});
