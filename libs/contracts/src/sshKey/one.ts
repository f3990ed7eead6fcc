import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { SshKeyRecord } from './record.js';

export const one = defineContract({
  method: 'GET',
  summary: 'An SSH key of the organization, without its private key',
  input: z.object({ sshKeyId: RequiredId }),
  output: SshKeyRecord,
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: { sshKeyId: 'ssh_example' },
});
