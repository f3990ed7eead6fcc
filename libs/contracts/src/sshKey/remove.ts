import { z } from 'zod';
import { defineContract } from '../contract.js';
import { RequiredId } from '../primitives.js';
import { SshKeyRecord } from './record.js';

export const remove = defineContract({
  method: 'POST',
  summary: 'Remove an SSH key',
  description:
    'Refused (BAD_REQUEST naming `sshKeyId`) while an application or compose stack uses it ' +
    '(`customGitSSHKeyId`). Answers the removed record.',
  input: z.object({ sshKeyId: RequiredId }),
  output: SshKeyRecord,
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: { sshKeyId: 'ssh_example' },
});
