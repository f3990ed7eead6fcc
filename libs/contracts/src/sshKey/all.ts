import { z } from 'zod';
import { defineContract } from '../contract.js';
import { SshKeyRecord } from './record.js';

export const all = defineContract({
  method: 'GET',
  summary: 'Every SSH key of the organization, without private keys',
  description: 'Oldest first.',
  input: z.object({}),
  output: z.array(SshKeyRecord),
  access: { grant: 'canAccessToSSHKeys' },
  extension: true,
  example: {},
});
