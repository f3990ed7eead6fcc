import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty } from '../primitives.js';
import { SshKeyRecord } from './record.js';

export const create = defineContract({
  method: 'POST',
  summary: 'Store an SSH key pair',
  description:
    '`privateKey` in OpenSSH format (`-----BEGIN OPENSSH PRIVATE KEY-----`) or PEM (PKCS#8, ' +
    'PKCS#1, SEC1), without a passphrase; `publicKey` as an authorized_keys line or PEM. ' +
    'Key types: ed25519, RSA, ECDSA (P-256, P-384, P-521). The public key must be the private ' +
    "key's own; each failure is a BAD_REQUEST naming its field. The public key is kept as an " +
    'authorized_keys line; the private key is stored encrypted and never returned.',
  input: z.object({
    name: NonEmpty,
    description: z.string().nullable().optional(),
    publicKey: NonEmpty,
    privateKey: NonEmpty,
  }),
  output: SshKeyRecord,
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: {
    name: 'deploy key',
    publicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIApMVS3TiK9X2H797sUvGJiiBBcZZvJDIxGU89dHWhHV deploy@skiff',
    privateKey: '-----BEGIN OPENSSH PRIVATE KEY-----\n…\n-----END OPENSSH PRIVATE KEY-----\n',
  },
});
