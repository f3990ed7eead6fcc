import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { FlagsPatch } from './flags.js';
import { OrganizationOfCaller, UPDATE_NOTE, WebhookUrl } from './fields.js';
import { CommunityNotification } from './record.js';

export const updateCommunity = defineContract({
  method: 'POST',
  summary: 'Change a Discord webhook (community) notification channel',
  description: UPDATE_NOTE,
  input: z.object({
    ...FlagsPatch.shape,
    webhookUrl: WebhookUrl.optional(),
    decoration: z.boolean().optional(),
    notificationId: RequiredId,
    communityId: RequiredId,
    organizationId: OrganizationOfCaller,
  }),
  output: CommunityNotification,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    communityId: 'cmt_example',
    decoration: false,
    name: 'ops-community-quiet',
  },
});
