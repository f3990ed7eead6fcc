import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty, NonEmpty } from '../primitives.js';
import { FromAddress, SmtpPort, ToAddresses } from './fields.js';

export const testEmailConnection = defineContract({
  method: 'POST',
  summary: 'Send a test email over SMTP (email) without storing the channel',
  input: z.object({
    smtpServer: NonEmpty,
    smtpPort: SmtpPort,
    username: NonEmpty,
    password: NonEmpty,
    toAddresses: ToAddresses,
    fromAddress: FromAddress,
  }),
  output: Empty,
  access: { role: 'admin' },
  example: {
    smtpServer: 'smtp.example.com',
    smtpPort: 587,
    username: 'alerts@example.com',
    password: 'smtp-password',
    toAddresses: ['ops@example.com'],
    fromAddress: 'alerts@example.com',
  },
});
