import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { Flags, flagsExample } from './flags.js';
import { FromAddress, SmtpPort, ToAddresses } from './fields.js';
import { EmailNotification } from './record.js';

export const createEmail = defineContract({
  method: 'POST',
  summary: 'Create a notification channel that sends email over SMTP (email)',
  description: '`password` is write-only. `fromAddress` and every `toAddresses` item are email addresses.',
  input: z.object({
    ...Flags.shape,
    smtpServer: NonEmpty,
    smtpPort: SmtpPort,
    username: NonEmpty,
    password: NonEmpty,
    fromAddress: FromAddress,
    toAddresses: ToAddresses,
  }),
  output: EmailNotification,
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
