import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Id, NonEmpty } from '../primitives.js';
import { CertificateRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Store a custom TLS certificate and its private key for the proxy',
  description:
    '`certificateData` is the PEM certificate (leaf first, then any intermediates); it must ' +
    'parse, must not be expired and must not carry a private key. `privateKey` is the PEM ' +
    'key (unencrypted) of the leaf certificate; a key that does not match is refused. The ' +
    'subject, issuer, DNS names, validity and fingerprint are recorded; the key is encrypted ' +
    'at rest and never returned. `certificatePath` is the folder name under the proxy ' +
    'certificate directory `/etc/skiff/certificates/` (letters, digits, `.`, `_`, `-`; the ' +
    'full path is accepted too); default: the certificate id; unique among the organization\'s certificates on a server. ' +
    '`certificateId` (optional) chooses the id (letters, digits, `_`, `-`). `serverId` serves ' +
    "it on a remote server instead of the platform host. `organizationId` must be the caller's " +
    'organization (another one is NOT_FOUND).',
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
  output: CertificateRecord,
  access: { role: 'admin' },
  example: {
    name: 'shop wildcard',
    certificateData: '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n',
    privateKey: '-----BEGIN PRIVATE KEY-----\nMIIE...\n-----END PRIVATE KEY-----\n',
    organizationId: 'org_example',
  },
});
