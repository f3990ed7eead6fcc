import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';
import { FlagsPatch } from './flags.js';

export const updatePush = defineContract({
  method: 'POST',
  summary: 'Change a push-server notification channel',
  input: z.object({
    ...FlagsPatch.shape,
    serverUrl: NonEmpty.optional(),
    appToken: NonEmpty.optional(),
    priority: z.number().min(1).optional(),
    decoration: z.boolean().optional(),
    notificationId: RequiredId,
    pushId: RequiredId,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: { notificationId: 'ntf_example', pushId: 'psh_example', priority: 8 },
});
