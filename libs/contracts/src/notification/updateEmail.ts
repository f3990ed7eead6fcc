import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId, Unspecified } from '../primitives.js';
import { FlagsPatch } from './flags.js';

export const updateEmail = defineContract({
  method: 'POST',
  summary: 'Change an SMTP email notification channel',
  input: z.object({
    ...FlagsPatch.shape,
    smtpServer: NonEmpty.optional(),
    smtpPort: z.number().min(1).optional(),
    username: NonEmpty.optional(),
    password: NonEmpty.optional(),
    fromAddress: NonEmpty.optional(),
    toAddresses: z.array(z.string()).min(1).optional(),
    notificationId: RequiredId,
    emailId: RequiredId,
    organizationId: z.string().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    emailId: 'eml_example',
    smtpPort: 465,
    toAddresses: ['ops@example.com', 'oncall@example.com'],
  },
});
