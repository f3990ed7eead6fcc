import { z } from 'zod';
import { defineContract } from '../contract.js';
import { Empty } from '../primitives.js';

export const saveSSHPrivateKey = defineContract({
  method: 'POST',
  summary: 'Store the SSH private key the host uses to reach git sources',
  input: z.object({ sshPrivateKey: z.string() }),
  output: Empty,
  access: { grant: 'canAccessToSSHKeys' },
  example: {
    sshPrivateKey:
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
  },
});
