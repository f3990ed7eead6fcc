import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty, RequiredId, Unspecified } from '../primitives.js';
import { FlagsPatch } from './flags.js';

export const updateHook = defineContract({
  method: 'POST',
  summary: 'Change a webhook notification channel',
  input: z.object({
    ...FlagsPatch.shape,
    webhookUrl: NonEmpty.optional(),
    channel: z.string().optional(),
    notificationId: RequiredId,
    hookId: Id,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    hookId: 'hok_example',
    channel: '#alerts',
    appDeploy: false,
  },
});
