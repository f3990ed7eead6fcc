import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';
import { FlagsPatch } from './flags.js';

export const updateCommunity = defineContract({
  method: 'POST',
  summary: 'Change a community-server webhook notification channel',
  input: z.object({
    ...FlagsPatch.shape,
    webhookUrl: NonEmpty.optional(),
    decoration: z.boolean().optional(),
    notificationId: RequiredId,
    communityId: RequiredId,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    communityId: 'cmt_example',
    decoration: false,
    name: 'ops-community-quiet',
  },
});
