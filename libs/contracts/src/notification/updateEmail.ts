import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { FlagsPatch } from './flags.js';
import { FromAddress, OrganizationOfCaller, SmtpPort, ToAddresses, UPDATE_NOTE } from './fields.js';
import { EmailNotification } from './record.js';

export const updateEmail = defineContract({
  method: 'POST',
  summary: 'Change an SMTP email (email) notification channel',
  description: UPDATE_NOTE,
  input: z.object({
    ...FlagsPatch.shape,
    smtpServer: NonEmpty.optional(),
    smtpPort: SmtpPort.optional(),
    username: NonEmpty.optional(),
    password: NonEmpty.optional(),
    fromAddress: FromAddress.optional(),
    toAddresses: ToAddresses.optional(),
    notificationId: RequiredId,
    emailId: RequiredId,
    organizationId: OrganizationOfCaller,
  }),
  output: EmailNotification,
  access: { role: 'admin' },
  example: {
    notificationId: 'ntf_example',
    emailId: 'eml_example',
    smtpPort: 465,
    toAddresses: ['ops@example.com', 'oncall@example.com'],
  },
});
