import { z } from 'zod';
import { defineContract } from '../contract.js';
import { HostSettingsRecord } from './record.js';

export const saveSSHPrivateKey = defineContract({
  method: 'POST',
  summary: 'Store the SSH private key the host uses to reach git sources',
  description:
    '`sshPrivateKey` in OpenSSH format (`-----BEGIN OPENSSH PRIVATE KEY-----`) or PEM (PKCS#8, ' +
    'PKCS#1, SEC1), without a passphrase; key types ed25519, RSA, ECDSA (P-256, P-384, P-521); ' +
    'anything else is a BAD_REQUEST naming `sshPrivateKey`. It replaces the stored key, is ' +
    'stored encrypted and never returned: the answer (the host settings) shows ' +
    '`hasSSHPrivateKey`, the public key and its fingerprint. Host settings affect every ' +
    'organization on this host: besides the `canAccessToSSHKeys` permission, the caller must ' +
    'be a platform administrator (the user created at first boot), FORBIDDEN otherwise.',
  input: z.object({ sshPrivateKey: z.string() }),
  output: HostSettingsRecord,
  access: { grant: 'canAccessToSSHKeys' },
  example: {
    sshPrivateKey:
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
  },
});
