import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty, Unspecified } from '../primitives.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Store a custom TLS certificate and its private key for the proxy',
  description:
    '`certificateData` is the PEM certificate (chain), `privateKey` the PEM key; the key is ' +
    'never returned. `certificatePath` is the folder name under the proxy certificate ' +
    'directory (generated when absent). `serverId` installs it on a remote server instead ' +
    "of the platform host. `organizationId` must be the caller's organization.",
  input: z.object({
    certificateId: z.string().optional(),
    name: NonEmpty,
    certificateData: NonEmpty,
    privateKey: NonEmpty,
    certificatePath: z.string().optional(),
    autoRenew: z.boolean().nullable().optional(),
    organizationId: Id,
    serverId: z.string().nullable().optional(),
  }),
  output: Unspecified,
  access: { role: 'admin' },
  example: {
    name: 'shop wildcard',
    certificateData: '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n',
    privateKey: '-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n',
    organizationId: 'org_example',
  },
});
