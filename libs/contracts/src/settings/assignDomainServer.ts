import { z } from 'zod';
import { defineContract } from '../contract.js';
import { CertificateType, Email, Unspecified } from '../primitives.js';

export const assignDomainServer = defineContract({
  method: 'POST',
  summary: 'Serve the platform dashboard on a domain of its own',
  description:
    'The spec does not show the extra fields. `letsEncryptEmail` (optional, email) is the ' +
    'account address for ACME certificates when `certificateType` is `acme`; `https` ' +
    '(optional) serves the domain over HTTPS and redirects plain HTTP to it.',
  input: z.object({
    host: z.string(),
    certificateType: CertificateType,
    letsEncryptEmail: Email.optional(),
    https: z.boolean().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    host: 'skiff.example.com',
    certificateType: 'acme',
    letsEncryptEmail: 'admin@example.com',
    https: true,
  },
});
