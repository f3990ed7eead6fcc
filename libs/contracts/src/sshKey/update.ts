import { z } from 'zod';
import { defineContract } from '../contract.js';
import { NonEmpty, RequiredId } from '../primitives.js';
import { SshKeyRecord } from './record.js';

export const update = defineContract({
  method: 'POST',
  summary: "Change an SSH key's name or description",
  description: 'The keys themselves do not change: store a new pair instead.',
  input: z.object({
    sshKeyId: RequiredId,
    name: NonEmpty.optional(),
    description: z.string().nullable().optional(),
  }),
  output: SshKeyRecord,
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: { sshKeyId: 'ssh_example', name: 'shop deploy key' },
});
