import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, Unspecified } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';

export const createEmail = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends email over SMTP',
  input: z.object({
    ...Flags.shape,
    smtpServer: NonEmpty,
    smtpPort: z.number().min(1),
    username: NonEmpty,
    password: NonEmpty,
    fromAddress: NonEmpty,
    toAddresses: z.array(z.string()).min(1),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    ...flagsExample,
    name: 'ops-email',
    smtpServer: 'smtp.example.com',
    smtpPort: 587,
    username: 'alerts@example.com',
    password: 'smtp-password',
    fromAddress: 'alerts@example.com',
    toAddresses: ['ops@example.com'],
  },
});
